import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { invalid } from './read-fields.ts';
import { messagesOf, tagValues, type Infer, type Schema } from '../lib/wire-schema.ts';

/**
 * Request bodies checked against their wire schema (lib/wire-schema.ts) by ajv's compiled code: one
 * pass, stopping at the first problem, which becomes the contract's invalid_request naming the
 * field (`messages[0].role must be one of ...`) as the hand-written readers did.
 */

const compilers: { fast?: Ajv; verbose?: Ajv } = {};

/**
 * Draft 7 is enough for these schemas and cheaper to run: 2020-12 tracks evaluated properties.
 * No inlined references: each shared schema one function, small enough for V8 to optimize.
 * `verbose` (a failure carries its schema node, where the message is) costs seven times as much
 * on every body that passes: only a refused body is checked again with it.
 */
function compiler(verbose: boolean): Ajv {
  const kind = verbose ? 'verbose' : 'fast';
  // validateSchema off: checking each schema against the draft's meta-schema took most of the first compile.
  compilers[kind] ??= new Ajv({
    discriminator: true,
    allowUnionTypes: true,
    strictTypes: false,
    inlineRefs: false,
    validateSchema: false,
    verbose,
  });
  return compilers[kind];
}

/** Keywords whose value is a schema, or holds schemas. */
const ONE = ['items', 'not', 'if', 'then', 'else', 'additionalProperties'];
const MANY = ['anyOf', 'oneOf', 'allOf'];
const NAMED = ['properties', '$defs'];

function childrenOf(node: Schema): Schema[] {
  const children: Schema[] = [];
  for (const [keyword, value] of Object.entries(node)) {
    if (typeof value !== 'object' || value === null) continue;
    if (ONE.includes(keyword)) children.push(value as Schema);
    else if (MANY.includes(keyword)) children.push(...(value as Schema[]));
    else if (NAMED.includes(keyword)) children.push(...(Object.values(value) as Schema[]));
  }
  return children;
}

/**
 * The schema with every large subschema used more than once (a message item, a tool) moved to
 * `$defs` and referenced: inlined, they made validators of hundreds of kilobytes, slow to compile
 * and too large for V8 to optimize. `originals` maps each new node back to its schema (and messages).
 */
function withSharedDefinitions(root: Schema, originals: Map<object, Schema>): Schema {
  const uses = new Map<Schema, number>();
  const count = (node: Schema): void => {
    uses.set(node, (uses.get(node) ?? 0) + 1);
    if (uses.get(node) === 1) childrenOf(node).forEach(count);
  };
  count(root);
  const names = new Map<Schema, string>();
  // Leaves stay in place (a union's discriminator must see its variants' tag values), small ones
  // are inlined where used; measured on the Codex body, a smaller threshold calls too often, a
  // larger one makes a function V8 leaves unoptimized.
  const size = (node: Schema): number => 1 + childrenOf(node).reduce((total, child) => total + size(child), 0);
  const large = (node: Schema) => (node.properties !== undefined || MANY.some((keyword) => node[keyword] !== undefined)) && size(node) >= 8;
  for (const [node, used] of uses) if (used > 1 && node !== root && large(node)) names.set(node, `shared${names.size}`);
  const rewrite = (node: Schema, top = false): Record<string, unknown> => {
    const name = names.get(node);
    if (name && !top) return { $ref: `#/$defs/${name}` };
    const copy: Record<string, unknown> = {};
    for (const [keyword, value] of Object.entries(node)) {
      if (typeof value !== 'object' || value === null) copy[keyword] = value;
      else if (ONE.includes(keyword)) copy[keyword] = rewrite(value as Schema);
      else if (MANY.includes(keyword)) copy[keyword] = (value as Schema[]).map((member) => rewrite(member));
      else if (NAMED.includes(keyword))
        copy[keyword] = Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, rewrite(inner as Schema)]));
      else copy[keyword] = value;
    }
    originals.set(copy, node);
    return copy;
  };
  const top = rewrite(root, true);
  if (names.size > 0) top.$defs = Object.fromEntries([...names].map(([node, name]) => [name, rewrite(node, true)]));
  return top;
}

/** A checker of one body schema: the body, typed by the schema, or invalid_request. */
export interface BodyValidator<T> {
  (body: unknown): T;
  /**
   * Compiles now what the first body would otherwise wait for (tens of milliseconds), once per
   * process: the app does it at start. The check of a refused body's message stays lazy.
   */
  compile(): void;
  /** Whether it is compiled already. */
  compiled(): boolean;
}

/** A checker of one body schema, compiled by `compile()` or else on first use. */
export function bodyValidator<S extends Schema>(schema: S): BodyValidator<Infer<S>> {
  const originals = new Map<object, Schema>();
  let shared: Schema | undefined;
  let validate: ValidateFunction | undefined;
  let explain: ValidateFunction | undefined;
  const compile = (): ValidateFunction => {
    shared ??= withSharedDefinitions(schema, originals);
    validate ??= compiler(false).compile(shared);
    return validate;
  };
  const check = (body: unknown): Infer<S> => {
    if ((validate ?? compile())(body)) return body as Infer<S>;
    explain ??= compiler(true).compile(shared!);
    explain(body);
    return invalid(describeFailure(originals, body, explain.errors ?? []));
  };
  return Object.assign(check, { compile: () => void compile(), compiled: () => validate !== undefined });
}

const unescape = (part: string) => part.replace(/~1/g, '/').replace(/~0/g, '~');

/** `/messages/0/role` -> `messages[0].role`. */
export function fieldOf(instancePath: string, child?: string): string {
  const parts = instancePath === '' ? [] : instancePath.slice(1).split('/');
  if (child !== undefined) parts.push(child);
  let field = '';
  for (const raw of parts) {
    const part = unescape(raw);
    field += /^\d+$/.test(part) ? `[${part}]` : field === '' ? part : `.${part}`;
  }
  return field;
}

/** How far into the body a failure is: the deepest one says the most (the branch of a union that nearly fit). */
function depth(error: ErrorObject): number {
  const segments = error.instancePath === '' ? 0 : error.instancePath.split('/').length - 1;
  return segments + (error.keyword === 'required' || error.keyword === 'discriminator' ? 1 : 0);
}

/** The failure to report: the deepest; among equals the last, which is a union's own when its members all failed. */
function chosen(errors: ErrorObject[]): ErrorObject | undefined {
  let best: ErrorObject | undefined;
  // An `if` failure only repeats what its `then` said.
  for (const error of errors) if (error.keyword !== 'if' && (!best || depth(error) >= depth(best))) best = error;
  return best;
}

const article = (word: string) => (/^[aeiou]/.test(word) ? `an ${word}` : `a ${word}`);

/** What a schema node accepts, in words: "a positive integer", "a string or an array". */
function noun(node: Schema): string {
  if (Array.isArray(node.anyOf))
    return (node.anyOf as Schema[])
      .filter((member) => member.type !== 'null')
      .map(noun)
      .join(' or ');
  const types = [node.type].flat().filter((name) => name !== 'null');
  if (types.length > 1) return types.map((type) => noun({ ...node, type })).join(' or ');
  if (node.const !== undefined) return JSON.stringify(node.const);
  if (Array.isArray(node.enum)) {
    const values = node.enum.filter((value) => value !== null);
    return values.length === 1 ? JSON.stringify(values[0]) : `one of ${values.join(', ')}`;
  }
  const [type] = types;
  switch (type) {
    case 'integer':
      return node.minimum === 1 ? 'a positive integer' : node.minimum === 0 ? 'a non-negative integer' : 'an integer';
    case 'string':
      return 'a string';
    case 'array': {
      const items = node.items as Schema | undefined;
      const kind = node.minItems ? 'a non-empty array' : 'an array';
      return items?.type === 'string' ? `${kind} of strings` : kind;
    }
    case undefined:
      return 'something else';
    default:
      return article(String(type));
  }
}

/** The value at a failure's place in the body, for the message: `"audio"` in `type must be one of text, image (not "audio")`. */
function sentValue(body: unknown, instancePath: string): string | undefined {
  const parts = instancePath === '' ? [] : instancePath.slice(1).split('/').map(unescape);
  const value = parts.reduce<unknown>((node, part) => (node as Record<string, unknown> | undefined)?.[part], body);
  return typeof value === 'string' && value.length <= 64 ? JSON.stringify(value) : undefined;
}

/** The field a failure is about, and what it should have been. */
function describeFailure(originals: Map<object, Schema>, body: unknown, errors: ErrorObject[]): string {
  const error = chosen(errors);
  if (!error) return 'the body is not valid';
  const node = originals.get(error.parentSchema as object) ?? (error.parentSchema as Schema);
  let field = fieldOf(error.instancePath);
  let text: string;
  if (error.keyword === 'required') {
    const missing = String(error.params.missingProperty);
    const property = (node.properties as Record<string, Schema> | undefined)?.[missing];
    const said = property && messagesOf(property).message;
    const { missing: whole } = messagesOf(node);
    if (!said && whole) text = whole;
    else {
      field = fieldOf(error.instancePath, missing);
      text = said ?? 'is required';
    }
  } else if (error.keyword === 'discriminator') {
    // A union's tag, missing or not one of its variants'.
    const tag = String(error.params.tag);
    const values = (node.oneOf as Schema[]).flatMap((variant) => tagValues(variant, tag));
    const sent = sentValue(body, `${error.instancePath}/${tag}`);
    field = fieldOf(error.instancePath, tag);
    text = `must be one of ${values.join(', ')}${sent ? ` (not ${sent})` : ''}`;
  } else {
    text = messagesOf(node).message ?? (error.keyword === 'not' ? 'is not accepted' : `must be ${noun(node)}`);
    const sent = error.keyword === 'enum' || error.keyword === 'const' ? sentValue(body, error.instancePath) : undefined;
    if (sent) text += ` (not ${sent})`;
  }
  const subject = field === '' ? 'the body' : field;
  return /^[:.[]/.test(text) ? `${subject}${text}` : `${subject} ${text}`;
}
