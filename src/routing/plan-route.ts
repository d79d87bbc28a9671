import { GatewayError } from '../errors/gateway-error.ts';
import type { ModelConfig } from '../config/schema.ts';
import type { ChatRequest, ReasoningEffort } from '../canonical/chat-request.ts';
import type { PromptMeasure } from '../tokens/token-estimate.ts';
import type { Attempt } from './attempt.ts';
import type { ModelCatalog } from './model-catalog.ts';

export interface RoutePlan {
  /** Models to try, in order. */
  candidates: ModelConfig[];
  /** Candidates left out without a call, with the reason (kept on the receipt). */
  skipped: Attempt[];
  /** Reasoning level asked for, or the alias default. */
  reasoningEffort?: ReasoningEffort;
  /** The alias the request was served through, if any. */
  alias?: string;
}

function hasImages(request: ChatRequest): boolean {
  return request.messages.some(
    (message) =>
      (message.role === 'user' || message.role === 'tool') &&
      typeof message.content !== 'string' &&
      message.content.some((part) => part.type === 'image'),
  );
}

export interface RoutingOptions {
  fallback: boolean;
  allowedModels?: string[];
  /**
   * A max output above a candidate's maximum is lowered to it rather than skipping the
   * candidate: Anthropic's max_tokens is required, so its clients send a large number.
   */
  clampMaxOutput?: boolean;
}

/** Why `model` cannot serve the prompt's request, or null when it can. */
export async function unfitReason(model: ModelConfig, prompt: PromptMeasure, clampMaxOutput = false): Promise<string | null> {
  const { request } = prompt;
  if (request.tools?.length && !model.capabilities.tools) return 'does not support tools';
  if (hasImages(request) && !model.capabilities.vision) return 'does not accept images';
  const asked = request.maxOutputTokens ?? 0;
  if (asked > model.maxOutputTokens && !clampMaxOutput) return `max output is ${model.maxOutputTokens} tokens, ${asked} asked`;
  const maxOutput = Math.min(asked, model.maxOutputTokens);
  const input = await prompt.fits(model, model.contextWindow - maxOutput);
  if (!input.fits) {
    return `context window is ${model.contextWindow} tokens, the request needs ${input.bound ? 'at least' : 'about'} ${input.tokens + maxOutput}`;
  }
  return null;
}

/**
 * A request for structured output goes first to the candidates that answer in a schema natively
 * (the others get it as a forced tool), keeping the alias's order within each group.
 */
function preferStructuredOutput(candidates: ModelConfig[]): ModelConfig[] {
  return [
    ...candidates.filter((model) => model.capabilities.structured_output),
    ...candidates.filter((model) => !model.capabilities.structured_output),
  ];
}

/**
 * Alias, model id or a name a model-name rule or wildcard entry covers -> ordered candidates
 * that can serve the prompt's request. Throws unsupported_model for unknown names and unsupported_parameter when none fits.
 */
export async function planRoute(catalog: ModelCatalog, requested: string, prompt: PromptMeasure, routing: RoutingOptions): Promise<RoutePlan> {
  const { request } = prompt;
  const { alias, model } = catalog.route(requested);
  let candidates = alias ? alias.candidates : [model!];
  if (routing.allowedModels) {
    const unknown = routing.allowedModels.filter((id) => !catalog.findModel(id));
    if (unknown.length) throw new GatewayError('unsupported_parameter', `routing.allowed_models names unknown models: ${unknown.join(', ')}`);
    const allowed = new Set(routing.allowedModels);
    candidates = candidates.filter((candidate) => allowed.has(candidate.id));
    if (!candidates.length) {
      throw new GatewayError('unsupported_parameter', `routing.allowed_models leaves no candidate of ${requested}`);
    }
  }

  const fit: ModelConfig[] = [];
  const skipped: Attempt[] = [];
  for (const candidate of candidates) {
    const reason = await unfitReason(candidate, prompt, routing.clampMaxOutput);
    if (reason) skipped.push({ model: candidate.id, outcome: 'skipped', errorCode: 'unsupported_parameter', detail: reason, latencyMs: 0 });
    else fit.push(candidate);
  }
  if (!fit.length) {
    const reasons = skipped.map((entry) => `${entry.model}: ${entry.detail}`).join('; ');
    throw new GatewayError('unsupported_parameter', `no candidate of ${requested} can serve this request (${reasons})`);
  }
  const ordered = request.responseFormat ? preferStructuredOutput(fit) : fit;
  return {
    candidates: routing.fallback ? ordered : ordered.slice(0, 1),
    skipped,
    reasoningEffort: request.reasoningEffort === 'none' ? undefined : (request.reasoningEffort ?? alias?.reasoning),
    ...(alias ? { alias: alias.name } : {}),
  };
}
