import type { ChatResult } from '../../canonical/chat-result.ts';
import type { ChatRequest, ResponseFormat } from '../../canonical/chat-request.ts';
import type { StreamPart } from '../../canonical/stream-part.ts';
import type { AnthropicTool, AnthropicToolChoice } from './anthropic-wire-types.ts';

/** The tool a model without structured outputs is made to call; its input is the object the client asked for. */
export const JSON_TOOL = 'json_output';

/** How a response format reaches an Anthropic model. */
export type StructuredOutputPlan =
  | { kind: 'none' }
  /** Native structured outputs: `output_config.format`. */
  | { kind: 'output_config'; format: Record<string, unknown> }
  /** A tool whose input is the object, forced (or offered beside the client's tools with `any`). */
  | { kind: 'tool'; tool: AnthropicTool; choice: AnthropicToolChoice };

function schemaOf(format: ResponseFormat): Record<string, unknown> {
  return format.type === 'json_schema' ? format.schema : { type: 'object', additionalProperties: true };
}

/**
 * Anthropic structured outputs (`output_config` with a json_schema format) where the model has
 * them; otherwise a tool whose input is the object, unwrapped back into the answer's text. With
 * the client's own tools and no forced choice, the model must call one of them or answer in
 * the format (`any`), which is what response_format means beside tools. A client that forced a
 * tool or turned tools off keeps its choice; the format cannot be honoured then.
 */
export function planStructuredOutput(request: ChatRequest, nativeSupport: boolean, warn: (message: string) => void): StructuredOutputPlan {
  const format = request.responseFormat;
  if (!format) return { kind: 'none' };
  if (nativeSupport && format.type === 'json_schema') return { kind: 'output_config', format: { type: 'json_schema', schema: format.schema } };
  const choice = request.toolChoice;
  if (request.tools?.length && (choice === 'none' || typeof choice === 'object')) {
    warn('response_format: the request chose its tool itself, so the model cannot also be held to the format; dropped');
    return { kind: 'none' };
  }
  const description =
    format.type === 'json_schema'
      ? `Answer with the ${format.name} object${format.description ? `: ${format.description}` : ''}. Its input is the whole answer.`
      : 'Answer with a JSON object. Its input is the whole answer.';
  return {
    kind: 'tool',
    tool: { name: JSON_TOOL, description, input_schema: schemaOf(format) },
    choice: request.tools?.length ? { type: 'any' } : { type: 'tool', name: JSON_TOOL },
  };
}

/** Whether a call's answer comes back through the JSON tool (and must be unwrapped). */
export function answersThroughJsonTool(request: ChatRequest, nativeSupport: boolean): boolean {
  const format = request.responseFormat;
  return format !== undefined && !(nativeSupport && format.type === 'json_schema');
}

/** The answer as the client expects it: the JSON tool's input as the message text. */
export function unwrapJsonTool(result: ChatResult): ChatResult {
  const call = result.toolCalls.find((entry) => entry.name === JSON_TOOL);
  if (!call) return result;
  const toolCalls = result.toolCalls.filter((entry) => entry !== call);
  return {
    ...result,
    content: result.content + call.arguments,
    toolCalls,
    finishReason: toolCalls.length === 0 && result.finishReason === 'tool_calls' ? 'stop' : result.finishReason,
  };
}

/** The same for a stream, as a synchronous stage: the JSON tool's argument pieces become text pieces, its start disappears. */
export class JsonToolUnwrapper {
  private jsonIndex: number | null = null;
  private otherCalls = false;

  /** The part as the client expects it, or null when it says nothing to the client. */
  map(part: StreamPart): StreamPart | null {
    if (part.type === 'tool-call-start') {
      if (part.name === JSON_TOOL) {
        this.jsonIndex = part.index;
        return null;
      }
      this.otherCalls = true;
    }
    if (part.type === 'tool-call-delta' && part.index === this.jsonIndex) {
      return part.argumentsDelta ? { type: 'text-delta', text: part.argumentsDelta } : null;
    }
    if (part.type === 'finish' && this.jsonIndex !== null && !this.otherCalls && part.finishReason === 'tool_calls') {
      return { ...part, finishReason: 'stop' };
    }
    return part;
  }
}
