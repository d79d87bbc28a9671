import fc from 'fast-check';

/**
 * What the body arbitraries are made of. Each endpoint's bodies come in three kinds (`family`):
 * valid, so they get past validation and reach a provider; valid with a few values broken; and
 * wrong in any field. Strings stay short: huge prompts are another test's business.
 */

/** A value of the wrong type or shape for almost any field. */
export const wrongValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(null, true, false, 0, -1, 1.5, -0, 1e308, -1e308, 2 ** 53 + 2, '', 'x', [], {}, [null], { a: 1 }, '__proto__'),
  fc.jsonValue({ maxDepth: 2 }),
);

/** Usually `valid`, sometimes a wrong value. */
export function field<T>(valid: fc.Arbitrary<T>, weight = 5): fc.Arbitrary<T | unknown> {
  return fc.oneof({ weight, arbitrary: valid }, { weight: 1, arbitrary: wrongValue });
}

/** Every node of a JSON value, pre-order, as the path to it. */
function nodePaths(value: unknown, path: Array<string | number> = [], into: Array<Array<string | number>> = []): Array<Array<string | number>> {
  into.push(path);
  if (Array.isArray(value)) value.forEach((item, index) => nodePaths(item, [...path, index], into));
  else if (value && typeof value === 'object') for (const [key, item] of Object.entries(value)) nodePaths(item, [...path, key], into);
  return into;
}

/** `value` with the node at `path` replaced (or, for `undefined`, removed). */
function replaceAt(value: unknown, path: Array<string | number>, replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const [head, ...rest] = path;
  if (Array.isArray(value)) {
    const copy = [...value];
    if (rest.length === 0 && replacement === undefined) copy.splice(head as number, 1);
    else copy[head as number] = replaceAt(copy[head as number], rest, replacement);
    return copy;
  }
  const copy = { ...(value as Record<string, unknown>) };
  if (rest.length === 0 && replacement === undefined) delete copy[head as string];
  else copy[head as string] = replaceAt(copy[head as string], rest, replacement);
  return copy;
}

/** A valid body with one to three of its nodes replaced by a wrong value or removed. */
export function mutated(valid: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  const change = fc.tuple(fc.nat(), fc.option(wrongValue, { nil: undefined, freq: 4 }));
  return fc.tuple(valid, fc.array(change, { minLength: 1, maxLength: 3 })).map(([body, changes]) =>
    changes.reduce<unknown>((current, [at, replacement]) => {
      const paths = nodePaths(current).slice(1);
      return paths.length ? replaceAt(current, paths[at % paths.length]!, replacement) : current;
    }, body),
  );
}

/** Valid bodies (they reach a provider), valid ones with a few nodes broken, and bodies noisy in every field. */
export function family(valid: fc.Arbitrary<unknown>, noisy: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc.oneof({ weight: 4, arbitrary: valid }, { weight: 3, arbitrary: mutated(valid) }, { weight: 2, arbitrary: noisy });
}

export const identifier = fc.stringMatching(/^[a-zA-Z_][a-zA-Z0-9_]{0,15}$/);

/** Short text of every kind: ASCII, graphemes, any code point, and strings parsers trip on. */
export const shortText: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 15 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 15 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      '\u0000',
      '\ud800',
      '\udfff',
      '😀',
      '{}',
      'null',
      '__proto__',
      'constructor',
      '\r\n',
      '%zz',
      'data: [DONE]\n\n',
    ),
  },
);

/**
 * A prompt: short text, or up to a few thousand characters of one kind (far below the sizes
 * another test covers). Runs without a space stay short: the fake upstream, in this process too,
 * counts tokens with a tokenizer whose cost grows with the square of such a run.
 */
export const promptText: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: shortText },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.constantFrom('a', '😀', '字', '\n', 'ab', '\u0000'), fc.integer({ min: 50, max: 400 })).map(([unit, n]) => unit.repeat(n)),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.constantFrom('ab ', '字字 ', 'x\n', '😀 '), fc.integer({ min: 100, max: 1_500 })).map(([unit, n]) => unit.repeat(n)),
  },
);

export const models = fc.constantFrom('svc/fast', 'svc/balanced', 'svc/best', 'up/alpha', 'up/beta', 'anth/claude', 'up/tiny');
export const modelField = fc.oneof(
  { weight: 8, arbitrary: models },
  { weight: 1, arbitrary: fc.constantFrom('gpt-4o', 'SVC/FAST', 'svc/', 'up/alpha ', 'up', '/') },
  { weight: 1, arbitrary: wrongValue },
);

export const validOutputTokens = fc.integer({ min: 1, max: 300 });
export const validSampling = fc.double({ min: 0, max: 1, noNaN: true });
export const validSchema = fc.constant({ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] });
export const outputTokens = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 1, max: 300 }) },
  { weight: 1, arbitrary: fc.integer({ min: -3, max: 3 }) },
  { weight: 1, arbitrary: fc.constantFrom(200, 4096, 8192, 32000, 1e9, 2 ** 53 - 1, 2 ** 53 + 2, 1e300, 1.5) },
);
export const sampling = fc.oneof(fc.double({ min: 0, max: 2, noNaN: true }), fc.constantFrom(-1, 1e308, 0));
export const stopField = fc.oneof(shortText, fc.array(shortText, { maxLength: 4 }));
export const routing = fc.record(
  { fallback: field(fc.boolean()), allowed_models: field(fc.array(fc.oneof(models, shortText), { maxLength: 3 })) },
  { requiredKeys: [] },
);
export const imageUrl = fc.constantFrom(
  'https://example.com/a.png',
  'data:image/png;base64,iVBORw0KGgo=',
  'data:;base64,',
  'not a url',
  '',
  'file:///etc/passwd',
);

/** A JSON schema as tools and structured output carry them, sometimes odd. */
export const jsonSchema: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant({ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }),
  fc.record({
    type: fc.constantFrom('object', 'array', 'string', 'nope'),
    properties: fc.dictionary(identifier, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
  }),
  fc.jsonValue({ maxDepth: 3 }),
);

/** Unknown fields a client may add (passed through to the provider). */
const extraFields = fc.dictionary(
  fc.oneof(identifier, fc.constantFrom('user', 'seed', 'n', 'logprobs', 'metadata', '__proto__', 'constructor')),
  fc.jsonValue({ maxDepth: 2 }),
  { maxKeys: 2 },
);

export function withExtras(body: fc.Arbitrary<Record<string, unknown>>): fc.Arbitrary<Record<string, unknown>> {
  return fc.tuple(body, fc.option(extraFields, { freq: 4 })).map(([fields, extra]) => (extra ? { ...extra, ...fields } : fields));
}
