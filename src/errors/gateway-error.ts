import { errorCatalog, type ErrorCode } from './catalog.ts';

/** The one error type the gateway throws on purpose; rendered per wire format at the edge. */
export class GatewayError extends Error {
  readonly code: ErrorCode;
  /** Extra response headers, e.g. retry-after. */
  readonly headers: Record<string, string>;
  /** The field or reason the error is about, when one is (the envelope's `param`). */
  readonly param: string | null;
  /** An HTTP status other than the code's own, where HTTP has a more precise one (413 for a body too large). */
  private readonly statusOverride: number | undefined;

  constructor(code: ErrorCode, message: string, headers: Record<string, string> = {}, param: string | null = null, status?: number) {
    super(message);
    this.name = 'GatewayError';
    this.code = code;
    this.headers = headers;
    this.param = param;
    this.statusOverride = status;
  }

  get status(): number {
    return this.statusOverride ?? errorCatalog[this.code].status;
  }

  get retryable(): boolean {
    return errorCatalog[this.code].retryable;
  }
}

/** Anything thrown that is not a GatewayError becomes internal_error; its message never reaches a client. */
export function toGatewayError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  return new GatewayError('internal_error', 'The gateway hit an unexpected error. Quote the request id when reporting it.');
}
