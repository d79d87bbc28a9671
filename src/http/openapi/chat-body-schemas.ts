import { z } from 'zod';
import { routingSchema } from '../../formats/parse-routing.ts';

/**
 * The provider-format bodies, as far as the gateway itself reads them. Their full shape is the
 * provider's (externalDocs of each operation); these list the fields the parsers in formats/ read
 * and the gateway's own `routing` (the schema parseRouting validates with). Other fields pass
 * through to providers of the same format.
 */

export const OPENAI_CHAT_DOCS = 'https://platform.openai.com/docs/api-reference/chat/create';
export const ANTHROPIC_MESSAGES_DOCS = 'https://docs.anthropic.com/en/api/messages';
export const ANTHROPIC_COUNT_TOKENS_DOCS = 'https://docs.anthropic.com/en/api/messages-count-tokens';
export const OPENAI_RESPONSES_DOCS = 'https://platform.openai.com/docs/api-reference/responses/create';

const model = z.string().min(1).describe('An alias (GET /v1/models) or a model id');
const stream = z.boolean().optional().describe('Server-sent events in the format of the route');
/** A new instance per use, so the document inlines it instead of pointing into another schema. */
const anyObject = () => z.record(z.unknown());

export const chatCompletionRequestSchema = z
  .object({
    model,
    messages: z
      .array(z.object({ role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']) }).passthrough())
      .min(1)
      .describe('OpenAI chat messages: text and image_url parts, tool calls and tool results'),
    stream,
    stream_options: anyObject().optional(),
    max_tokens: z.number().int().min(1).optional(),
    max_completion_tokens: z.number().int().min(1).optional(),
    tools: z.array(anyObject()).optional(),
    tool_choice: z.union([z.enum(['auto', 'none', 'required']), anyObject()]).optional(),
    parallel_tool_calls: z.boolean().optional(),
    temperature: z.number().optional(),
    top_p: z.number().optional(),
    stop: z.union([z.string(), z.array(z.string())]).optional(),
    reasoning_effort: z.enum(['low', 'medium', 'high', 'xhigh']).optional().describe('high is read as xhigh'),
    response_format: anyObject().optional().describe('text, json_object or json_schema'),
    routing: routingSchema.optional(),
  })
  .passthrough()
  .describe('An OpenAI chat-completions body; other fields reach OpenAI-format providers unchanged');

export const messagesRequestSchema = z
  .object({
    model,
    messages: z.array(z.object({ role: z.enum(['user', 'assistant']) }).passthrough()).describe('Anthropic messages and content blocks'),
    system: z.union([z.string(), z.array(anyObject())]).optional(),
    max_tokens: z.number().int().min(1).describe('Clamped to what the answering model allows'),
    stream,
    stop_sequences: z.array(z.string()).optional(),
    temperature: z.number().optional(),
    top_p: z.number().optional(),
    tools: z.array(anyObject()).optional(),
    tool_choice: anyObject().optional(),
    thinking: anyObject().optional(),
    output_config: anyObject().optional(),
    routing: routingSchema.optional(),
  })
  .passthrough()
  .describe('An Anthropic Messages body; other fields reach Anthropic-format providers unchanged');

export const countTokensRequestSchema = messagesRequestSchema
  .omit({ max_tokens: true, stream: true })
  .describe('The fields of a Messages body that count toward its input');

export const responsesRequestSchema = z
  .object({
    model,
    input: z.union([z.string(), z.array(anyObject())]).describe('Text or input items'),
    instructions: z.string().nullish(),
    stream,
    max_output_tokens: z.number().int().min(1).nullish(),
    tools: z.array(anyObject()).optional(),
    tool_choice: z.union([z.string(), anyObject()]).optional(),
    parallel_tool_calls: z.boolean().nullish(),
    temperature: z.number().nullish(),
    top_p: z.number().nullish(),
    reasoning: anyObject().nullish(),
    text: anyObject().nullish().describe('text.format asks for structured output'),
    store: z.boolean().nullish().describe('Accepted and ignored: the gateway is stateless'),
    routing: routingSchema.optional(),
  })
  .passthrough()
  .describe('An OpenAI Responses body; stateless (previous_response_id, conversation, prompt and background are refused)');

export const chatCompletionSchema = z
  .object({
    id: z.string(),
    object: z.literal('chat.completion'),
    created: z.number().int(),
    model: z.string().describe('The model that answered'),
    choices: z.array(z.object({ index: z.number().int(), message: anyObject(), finish_reason: z.string().nullable() }).passthrough()),
    usage: anyObject(),
  })
  .passthrough();

export const messageSchema = z
  .object({
    id: z.string(),
    type: z.literal('message'),
    role: z.literal('assistant'),
    model: z.string(),
    content: z.array(anyObject()),
    stop_reason: z.string().nullable(),
    usage: anyObject(),
  })
  .passthrough();

export const countTokensSchema = z.object({ input_tokens: z.number().int() }).strict();

export const responseSchema = z
  .object({
    id: z.string(),
    object: z.literal('response'),
    created_at: z.number().int(),
    status: z.string(),
    model: z.string(),
    output: z.array(anyObject()),
    usage: anyObject().nullable(),
  })
  .passthrough();
