import { errorCatalog } from './catalog.ts';
import type { AnthropicErrorBody, OpenAIErrorBody } from './error-schemas.ts';
import type { GatewayError } from './gateway-error.ts';

/** The contract's envelope, as OpenAI-style clients parse it. */
export function renderOpenAIError(error: GatewayError, requestId: string): OpenAIErrorBody {
  const spec = errorCatalog[error.code];
  return {
    error: {
      message: error.message,
      type: spec.type,
      code: error.code,
      param: error.param,
      retryable: spec.retryable,
      request_id: requestId,
    },
  };
}

/** The same fields inside the body Anthropic clients parse. */
export function renderAnthropicError(error: GatewayError, requestId: string): AnthropicErrorBody {
  const spec = errorCatalog[error.code];
  return {
    type: 'error',
    error: {
      type: spec.anthropicType,
      message: error.message,
      code: error.code,
      retryable: spec.retryable,
      request_id: requestId,
    },
    request_id: requestId,
  };
}
