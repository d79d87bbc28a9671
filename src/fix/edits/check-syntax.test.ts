import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkSyntax } from './check-syntax.ts';

test('valid files of every checked kind have no problems', async () => {
  for (const [path, content] of [
    ['a.json', '{"a": [1, 2]}\n'],
    ['a.js', 'export const a = () => 1;\n'],
    ['a.cjs', 'module.exports = {};\n'],
    ['a.jsx', 'export const A = () => <div>hi</div>;\n'],
    ['a.ts', 'export const a: number = 1;\n'],
    ['a.mts', 'export type A = { a: string };\n'],
    ['a.tsx', 'export const A = (p: { n: number }) => <b>{p.n}</b>;\n'],
  ]) {
    assert.deepEqual(await checkSyntax({ path: path!, content: content! }), [], path);
  }
});

test('a TypeScript syntax error names the file, line and column', async () => {
  assert.deepEqual(await checkSyntax({ path: 'src/a.ts', content: 'const a = 1;\nconst b = ;\n' }), ['src/a.ts:2:11: Unexpected ";"']);
});

test('JSX in a .ts file is an error, because the loader follows the extension', async () => {
  assert.equal((await checkSyntax({ path: 'a.ts', content: 'const a = <div/>;\n' })).length > 0, true);
});

test('invalid JSON names the file, line and column', async () => {
  const [problem] = await checkSyntax({ path: 'config.json', content: '{\n  "a": 1,\n}\n' });
  assert.match(problem!, /^config\.json:3:1: invalid JSON: /);
});

test('other extensions are not checked', async () => {
  assert.deepEqual(await checkSyntax({ path: 'a.py', content: 'def (:\n' }), []);
});
