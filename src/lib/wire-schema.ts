/**
 * JSON Schema written in TypeScript. Each builder returns a plain JSON Schema object (what ajv
 * compiles and the OpenAPI document shows as it is) typed with the value it accepts, so one
 * definition validates a body, documents it and types the code that reads it: `Infer<typeof s>`.
 * Objects are open (other fields allowed) unless they say otherwise.
 */

declare const ACCEPTS: unique symbol;

/** A JSON Schema object, typed with the values it accepts. */
export type Schema<T = unknown> = { readonly [keyword: string]: unknown; readonly [ACCEPTS]?: T };

export type Infer<S> = S extends Schema<infer T> ? T : never;

/**
 * The tag of a variant an open union does not list. TypeScript has no "a string but these", and a
 * template type is the one a switch on the tag narrows past; the value is whatever string was sent.
 */
export type UnlistedTag = `unlisted ${string}`;

type Shape = Record<string, Schema>;
type Flat<T> = { [K in keyof T]: T[K] } & {};
type ObjectOf<R extends Shape, O extends Shape> = Flat<{ [K in keyof R]: Infer<R[K]> } & { [K in keyof O]?: Infer<O[K]> }>;

export interface Notes {
  description?: string;
  /** What follows the field's name when its value is refused, e.g. "must be a positive integer" (else one is made from the schema). */
  message?: string;
  /** An object's: what follows its name when a required field is missing, e.g. "needs id and name" (else "<field> is required"). */
  missing?: string;
}

export type Messages = Pick<Notes, 'message' | 'missing'>;

const messages = new WeakMap<object, Messages>();

/** The messages a schema node was given for a refused value, if any. */
export function messagesOf(node: object): Messages {
  return messages.get(node) ?? {};
}

function make<T>(json: Record<string, unknown>, notes: Notes = {}): Schema<T> {
  const { description, message, missing } = notes;
  const schema = description === undefined ? json : { ...json, description };
  if (message !== undefined || missing !== undefined) messages.set(schema, { message, missing });
  return schema as Schema<T>;
}

/**
 * A string; `notEmpty`: any but "". Not minLength: ajv counts its code points, a call walking the
 * whole string, three times the cost of the rest of a tool's checks and megabytes for an image URL.
 */
export function string(options: Notes & { notEmpty?: boolean } = {}): Schema<string> {
  const { notEmpty, ...notes } = options;
  return notEmpty
    ? make({ type: 'string', not: { const: '' } }, { message: 'must be a non-empty string', ...notes })
    : make({ type: 'string' }, notes);
}

export const literal = <const V extends string>(value: V, notes?: Notes) => make<V>({ type: 'string', const: value }, notes);

export const enumOf = <const V extends readonly string[]>(values: V, notes?: Notes) => make<V[number]>({ type: 'string', enum: values }, notes);

export const integer = (options: Notes & { minimum?: number } = {}) =>
  make<number>({ type: 'integer', ...(options.minimum === undefined ? {} : { minimum: options.minimum }) }, options);

export const number = (notes?: Notes) => make<number>({ type: 'number' }, notes);

export const boolean = (notes?: Notes) => make<boolean>({ type: 'boolean' }, notes);

/** Any JSON object: tool parameters, metadata, what the gateway hands on without reading. */
export const anyObject = (notes?: Notes) => make<Record<string, unknown>>({ type: 'object' }, notes);

export const anyValue = (notes?: Notes) => make<unknown>({}, notes);

export const array = <S extends Schema>(items: S, options: Notes & { minItems?: number } = {}) =>
  make<Array<Infer<S>>>({ type: 'array', items, ...(options.minItems === undefined ? {} : { minItems: options.minItems }) }, options);

/** An object with `required` and `optional` fields; others are allowed unless `closed`. */
export function object<R extends Shape, O extends Shape = Record<never, Schema>>(
  required: R,
  optional?: O,
  options: Notes & { closed?: boolean } = {},
): Schema<ObjectOf<R, O>> {
  const names = Object.keys(required);
  return make(
    {
      type: 'object',
      properties: { ...required, ...optional },
      ...(names.length ? { required: names } : {}),
      ...(options.closed ? { additionalProperties: false } : {}),
    },
    options,
  );
}

/** The value, or null: what a client sends for "not given". */
export function nullable<T>(schema: Schema<T>, notes: Notes = {}): Schema<T | null> {
  const { type, anyOf, oneOf, allOf } = schema;
  let json: Record<string, unknown>;
  // A union's members would each see the null: it becomes one more member instead.
  if ((typeof type === 'string' || Array.isArray(type)) && !oneOf && !allOf && !schema.if) {
    json = { ...schema, type: [type, 'null'].flat() };
    if (Array.isArray(schema.enum)) json.enum = [...(schema.enum as unknown[]), null];
    if ('const' in schema) {
      delete json.const;
      json.enum = [schema.const, null];
    }
  } else if (Array.isArray(anyOf)) {
    json = { ...schema, anyOf: [...anyOf, { type: 'null' }] };
  } else {
    json = { anyOf: [schema, { type: 'null' }] };
  }
  return make(json, { ...messages.get(schema), ...notes });
}

const COMPOSED = ['anyOf', 'oneOf', 'allOf', 'if', 'not', 'enum', 'const'];

/**
 * One of several shapes. Shapes of different JSON types (a string or an array of parts) become
 * one schema with a list of types, each keyword applying to its own type: with `anyOf`, every
 * body whose value is not the first member would build an error object for it on the way.
 */
export function union<S extends Schema[]>(members: S, notes?: Notes): Schema<Infer<S[number]>> {
  const types = members.map((member) => member.type);
  const distinct = types.every((type) => typeof type === 'string') && new Set(types).size === types.length;
  const plain = members.every((member) => !COMPOSED.some((keyword) => keyword in member) && !('description' in member));
  if (!distinct || !plain) return make({ anyOf: members }, notes);
  return make(Object.assign({}, ...members, { type: types }) as Record<string, unknown>, notes);
}

/** The values a variant's tag field takes (its const or enum); a variant without one is a mistake in this file. */
export function tagValues(variant: Schema, tag: string): string[] {
  const field = (variant.properties as Record<string, Schema> | undefined)?.[tag];
  const values = field?.const !== undefined ? [field.const] : field?.enum;
  if (!Array.isArray(values)) throw new Error(`a variant of the union on "${tag}" has no const or enum for it`);
  return values.filter((value) => value !== null) as string[];
}

/**
 * Objects told apart by one string field (`type`, `role`): a variant per value, any other value
 * refused. `fields`: what every variant has besides (for a union on another field around this one).
 */
export function tagged<V extends Schema[]>(tag: string, variants: V, options: Notes & { fields?: Shape } = {}): Schema<Infer<V[number]>> {
  variants.forEach((variant) => tagValues(variant, tag));
  // No enum of the tag beside the discriminator: ajv's switch on it refuses another value by itself.
  const fields = options.fields ? { properties: options.fields } : {};
  return make({ type: 'object', required: [tag], ...fields, discriminator: { propertyName: tag }, oneOf: variants }, options);
}

/**
 * Objects told apart by one string field, where values not listed are allowed and left unchecked
 * (hosted tools, item types newer than the gateway). The field is required, unless `untagged`
 * names the variant an object without it is. One `if` on the listed values, then ajv's switch on
 * the tag: an `if` per variant would cost an allocation for each one an object is not.
 */
export function taggedOpen<Tag extends string, V extends Schema[]>(
  tag: Tag,
  variants: V,
  options: Notes & { untagged?: V[number] } = {},
): Schema<Infer<V[number]> | { [K in Tag]: UnlistedTag }> {
  const values = variants.flatMap((variant) => tagValues(variant, tag));
  // Past the `if`, the tag is a listed one: ajv's switch on it needs no check of its own.
  const listed = { required: [tag], discriminator: { propertyName: tag }, oneOf: variants };
  const cases = { if: { properties: { [tag]: { enum: values } } }, then: listed };
  const { untagged } = options;
  // Tagged objects first: an `if` that fails costs an allocation, and most objects have the tag.
  const shape = untagged ? { if: { required: [tag] }, then: cases, else: untagged } : { required: [tag], ...cases };
  return make({ type: 'object', properties: { [tag]: { type: 'string' } }, ...shape }, options);
}

/** A shape refused whatever else it holds, with the message saying why (what the stateless gateway cannot serve). */
export const refused = (shape: Schema, notes: Notes) => make<never>({ ...shape, not: {} }, notes);

/** Only null (or, in a request, leaving the field out: one the gateway refuses, its message saying why). */
export const nullOnly = (notes?: Notes) => make<null>({ type: 'null' }, notes);

/** Any value but this one. */
export const anythingBut = (value: string | number | boolean, notes: Notes) => make<unknown>({ not: { const: value } }, notes);

/** The fields an object schema lists but `except`: what a parser reads, every other field being passed through. */
export function fieldsOf(schema: Schema, except: string[] = []): ReadonlySet<string> {
  return new Set(Object.keys((schema.properties as object | undefined) ?? {}).filter((name) => !except.includes(name)));
}
