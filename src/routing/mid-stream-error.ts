import type { ModelConfig } from '../config/schema.ts';
import { GatewayError, toGatewayError } from '../errors/gateway-error.ts';
import { ProviderError } from '../providers/provider-error.ts';

/**
 * A failure after the answer began: no fallback is possible any more, so a provider failure of
 * any kind is provider_unavailable (retryable: the client may ask again); anything else is what
 * it was (a bug is internal_error).
 */
export function midStreamError(model: ModelConfig, error: unknown): GatewayError {
  if (error instanceof ProviderError) return new GatewayError('provider_unavailable', `${model.id} failed after the answer began: ${error.message}`);
  return toGatewayError(error);
}
