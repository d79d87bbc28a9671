/** A mistake by the operator: shown as one line, without a stack. */
export class CliError extends Error {
  override name = 'CliError';
  constructor(
    message: string,
    /** 1 for a failed command, 2 for a command line that could not be understood. */
    readonly exitCode = 1,
  ) {
    super(message);
  }
}
