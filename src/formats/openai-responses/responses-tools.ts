import type { ToolChoice, ToolDefinition } from '../../canonical/chat-request.ts';
import type { ResponsesRequestBody, ResponsesTool } from './responses-request-schema.ts';

/**
 * Responses API tools -> canonical function tools, and back for the calls the model makes.
 * https://platform.openai.com/docs/api-reference/responses/create#responses-create-tools
 *
 * Translated: `function`; `custom` (free-form input, e.g. Codex's apply_patch) as a function
 * with one string argument `input`; `namespace` as its functions and custom tools, flattened to
 * `<namespace>__<name>`. Dropped: hosted tools the provider would have to run itself
 * (web_search, file_search, code_interpreter, image_generation, mcp, computer use, local_shell,
 * shell, apply_patch, tool_search): no chat-completions model can honour them.
 */

/** How a canonical tool name is rendered back when the model calls it. */
export interface ToolOrigin {
  type: 'function' | 'custom';
  name: string;
  namespace?: string;
}

/** Canonical tool name -> origin in the client's tool list. */
export type ToolOrigins = ReadonlyMap<string, ToolOrigin>;

export const NAMESPACE_SEPARATOR = '__';

/** The canonical (provider-facing) name of a client tool. */
export function canonicalToolName(name: string, namespace?: string): string {
  return namespace ? `${namespace}${NAMESPACE_SEPARATOR}${name}` : name;
}

type FunctionTool = Extract<ResponsesTool, { type: 'function' }>;
type CustomTool = Extract<ResponsesTool, { type: 'custom' }>;

/** Arguments schema of a custom tool: its free-form input as one string. */
function customToolDefinition(tool: CustomTool, name: string): ToolDefinition {
  const format = tool.format;
  const grammar = format?.type === 'grammar' ? `\n\nThe input must follow this ${format.syntax ?? ''} grammar:\n${format.definition}` : '';
  const description = `${tool.description ?? ''}${grammar}`.trim();
  const definition: ToolDefinition = {
    name,
    parameters: {
      type: 'object',
      properties: { input: { type: 'string', description: 'The free-form input of the tool.' } },
      required: ['input'],
      additionalProperties: false,
    },
  };
  if (description !== '') definition.description = description;
  return definition;
}

function functionDefinition(tool: FunctionTool, name: string): ToolDefinition {
  const definition: ToolDefinition = { name };
  if (typeof tool.description === 'string') definition.description = tool.description;
  if (tool.parameters) definition.parameters = tool.parameters;
  if (typeof tool.strict === 'boolean') definition.strict = tool.strict;
  return definition;
}

interface TranslatedTools {
  tools: ToolDefinition[];
  origins: Map<string, ToolOrigin>;
}

function addTool(into: TranslatedTools, tool: FunctionTool | CustomTool, namespace?: string): void {
  const name = canonicalToolName(tool.name, namespace);
  into.tools.push(tool.type === 'function' ? functionDefinition(tool, name) : customToolDefinition(tool, name));
  into.origins.set(name, namespace ? { type: tool.type, name: tool.name, namespace } : { type: tool.type, name: tool.name });
}

/** Translate the `tools` array; hosted tools are left out (see the file comment). */
export function translateTools(value: ResponsesRequestBody['tools']): TranslatedTools {
  const translated: TranslatedTools = { tools: [], origins: new Map() };
  for (const tool of value ?? []) {
    if (tool.type === 'namespace') {
      for (const inner of tool.tools) if (inner.type === 'function' || inner.type === 'custom') addTool(translated, inner, tool.name);
    } else if (tool.type === 'function' || tool.type === 'custom') {
      addTool(translated, tool);
    }
  }
  return translated;
}

/**
 * `tool_choice` -> canonical. A choice of a hosted tool (dropped) becomes auto; `allowed_tools`
 * keeps its mode (the model still sees every tool).
 */
export function translateToolChoice(value: ResponsesRequestBody['tool_choice']): ToolChoice | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  switch (value.type) {
    case 'function':
    case 'custom':
      return { name: canonicalToolName(value.name, value.namespace ?? undefined) };
    case 'allowed_tools':
      return value.mode === 'required' ? 'required' : 'auto';
    default:
      return 'auto';
  }
}
