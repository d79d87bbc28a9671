import type { ToolChoice, ToolDefinition } from '../../canonical/chat-request.ts';
import { invalid, isObject } from '../read-fields.ts';

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

/** Arguments schema of a custom tool: its free-form input as one string. */
function customToolDefinition(tool: Record<string, unknown>, name: string): ToolDefinition {
  const format = isObject(tool.format) ? tool.format : undefined;
  const grammar =
    format?.type === 'grammar' && typeof format.definition === 'string'
      ? `\n\nThe input must follow this ${typeof format.syntax === 'string' ? format.syntax : ''} grammar:\n${format.definition}`
      : '';
  const description = `${typeof tool.description === 'string' ? tool.description : ''}${grammar}`.trim();
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

function functionDefinition(tool: Record<string, unknown>, name: string): ToolDefinition {
  const definition: ToolDefinition = { name };
  if (typeof tool.description === 'string') definition.description = tool.description;
  if (isObject(tool.parameters)) definition.parameters = tool.parameters;
  if (typeof tool.strict === 'boolean') definition.strict = tool.strict;
  return definition;
}

interface TranslatedTools {
  tools: ToolDefinition[];
  origins: Map<string, ToolOrigin>;
}

function addTool(into: TranslatedTools, tool: unknown, at: string, namespace?: string): void {
  if (!isObject(tool)) invalid(`${at} must be an object`);
  if (tool.type !== 'function' && tool.type !== 'custom') return;
  if (typeof tool.name !== 'string' || tool.name === '') invalid(`${at}.name is required`);
  const name = canonicalToolName(tool.name, namespace);
  into.tools.push(tool.type === 'function' ? functionDefinition(tool, name) : customToolDefinition(tool, name));
  into.origins.set(name, namespace ? { type: tool.type, name: tool.name, namespace } : { type: tool.type, name: tool.name });
}

/** Translate the `tools` array; hosted tools are left out (see the file comment). */
export function translateTools(value: unknown): TranslatedTools {
  const translated: TranslatedTools = { tools: [], origins: new Map() };
  if (value === undefined || value === null) return translated;
  if (!Array.isArray(value)) invalid('tools must be an array');
  value.forEach((tool, index) => {
    const at = `tools[${index}]`;
    if (isObject(tool) && tool.type === 'namespace') {
      if (typeof tool.name !== 'string' || tool.name === '') invalid(`${at}.name is required`);
      if (!Array.isArray(tool.tools)) invalid(`${at}.tools must be an array`);
      const namespace = tool.name;
      tool.tools.forEach((inner, innerIndex) => addTool(translated, inner, `${at}.tools[${innerIndex}]`, namespace));
      return;
    }
    addTool(translated, tool, at);
  });
  return translated;
}

/**
 * `tool_choice` -> canonical. A choice of a hosted tool (dropped) becomes auto; `allowed_tools`
 * keeps its mode (the model still sees every tool).
 */
export function translateToolChoice(value: unknown): ToolChoice | undefined {
  if (value === undefined || value === null) return undefined;
  if (value === 'auto' || value === 'none' || value === 'required') return value;
  if (!isObject(value) || typeof value.type !== 'string') {
    return invalid('tool_choice must be auto, none, required or an object with a type');
  }
  if (value.type === 'function' || value.type === 'custom') {
    if (typeof value.name !== 'string' || value.name === '') invalid(`tool_choice.name is required for type ${value.type}`);
    return { name: canonicalToolName(value.name, typeof value.namespace === 'string' ? value.namespace : undefined) };
  }
  if (value.type === 'allowed_tools') return value.mode === 'required' ? 'required' : 'auto';
  return 'auto';
}
