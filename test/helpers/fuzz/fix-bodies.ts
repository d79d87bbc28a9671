import fc from 'fast-check';
import { family, field, promptText, shortText } from './values.ts';

/** Bodies of POST /v1/fix/quote, from its real field names. */

const fixPath = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('src/add.js', 'lib/a.ts', 'package.json', 'test/add.test.js', 'README.md') },
  { weight: 1, arbitrary: fc.constantFrom('../etc/passwd', '/abs.js', 'a//b.js', './x.js', 'C:/x.js', '.git/config', 'a b.js', '', 'x'.repeat(400)) },
  { weight: 1, arbitrary: shortText },
);
const fixFile = fc.record({ path: field(fixPath), content: field(promptText) }, { requiredKeys: ['path', 'content'] });

const noisyQuoteBody = fc.record(
  {
    agent: field(fc.constantFrom('code-fix', 'test-fix', 'no-such-agent')),
    tier: field(fc.constantFrom('fast', 'balanced', 'best', 'ultra')),
    files: field(fc.array(fixFile, { minLength: 1, maxLength: 3 })),
    tests: field(fc.array(fixFile, { maxLength: 2 }), 2),
    command: field(fc.constantFrom('npm test', 'node --test', '')),
    output: field(shortText),
    instruction: field(shortText),
    max_steps: field(fc.integer({ min: 0, max: 10 })),
    max_cost: field(fc.constantFrom('0.5', '0', '0.000000001', '1e3', '-1', '10.0000000001', '99999999999999999', ' 1 ')),
  },
  { requiredKeys: ['agent', 'tier', 'files'] },
);

const validFile = fc.record({ path: fc.constantFrom('src/add.js', 'lib/a.ts', 'package.json'), content: promptText });
const validQuoteBody = fc.oneof(
  fc.record(
    {
      agent: fc.constant('code-fix'),
      tier: fc.constantFrom('fast', 'balanced', 'best'),
      files: fc.array(validFile, { minLength: 1, maxLength: 1 }),
      instruction: shortText.filter((text) => text !== ''),
      max_steps: fc.integer({ min: 1, max: 3 }),
      max_cost: fc.constantFrom('0.5', '2'),
    },
    { requiredKeys: ['agent', 'tier', 'files', 'instruction'] },
  ),
  fc.record({
    agent: fc.constant('test-fix'),
    tier: fc.constantFrom('fast', 'balanced', 'best'),
    files: fc.constant([{ path: 'src/add.js', content: 'export const add = (a, b) => a - b;\n' }]),
    tests: fc.constant([{ path: 'test/add.test.js', content: 'assert.equal(add(2, 3), 5);\n' }]),
    command: fc.constant('node --test'),
    output: fc.constant('AssertionError: -1 !== 5'),
  }),
);

export const quoteBody = family(validQuoteBody, noisyQuoteBody);
