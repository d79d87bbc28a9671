/** A mistake by the operator: shown as one line, without a stack. */
export class CliError extends Error {
  override name = 'CliError';
  constructor(
    message: string,
    /** 1 for a failed command, 2 for a command line that could not be understood (or, for check-config, a bad config). */
    readonly exitCode = 1,
    /** Follow the message with 'Run "gateway help" for usage.' */
    readonly usageHint = exitCode === 2,
  ) {
    super(message);
  }
}
