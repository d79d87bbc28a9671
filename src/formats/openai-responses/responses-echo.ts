import { isObject } from '../read-fields.ts';

/** What the parser read that the response repeats. */
export interface EchoedFields {
  instructions?: string;
  maxOutputTokens?: number;
  parallel?: boolean;
  reasoning: { sentEffort: string | null; summary: string | null };
  temperature?: number;
  topP?: number;
}

/**
 * The request fields a Responses object repeats, in their response form (what Codex and the
 * SDKs read back): stateless values where the gateway keeps nothing (store: false, no previous
 * response), the client's own values otherwise.
 */
export function responseEcho(body: Record<string, unknown>, read: EchoedFields): Record<string, unknown> {
  const { instructions, parallel, reasoning, temperature, topP } = read;
  const metadata = body.metadata;
  return {
    instructions: instructions ?? null,
    max_output_tokens: read.maxOutputTokens ?? null,
    parallel_tool_calls: parallel ?? true,
    previous_response_id: null,
    reasoning: { effort: reasoning.sentEffort, summary: reasoning.summary },
    store: false,
    temperature: temperature ?? null,
    text: isObject(body.text) ? body.text : { format: { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: Array.isArray(body.tools) ? body.tools : [],
    top_p: topP ?? null,
    truncation: body.truncation === 'auto' ? 'auto' : 'disabled',
    metadata: isObject(metadata) ? metadata : {},
    ...(typeof body.user === 'string' ? { user: body.user } : {}),
    ...(typeof body.prompt_cache_key === 'string' ? { prompt_cache_key: body.prompt_cache_key } : {}),
  };
}
