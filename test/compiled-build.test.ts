import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildServer } from './helpers/build-server.ts';

test('the compiled build loads no TypeScript compiler or loader, and bin/gateway.js runs it', () => {
  buildServer();
  const directory = join('dist', 'server');
  const files = readdirSync(directory).filter((name) => name.endsWith('.js'));
  assert.ok(files.includes('main.js'));
  const imported = new Set<string>();
  for (const name of files) {
    const text = readFileSync(join(directory, name), 'utf8');
    for (const match of text.matchAll(/(?:from\s*|import\s*\(\s*)["']([^"']+)["']/g)) imported.add(match[1]!);
  }
  const packages = [...imported].filter((specifier) => !specifier.startsWith('.') && !specifier.startsWith('node:'));
  assert.deepEqual(
    // esbuild stays: fix agents check the syntax of the code they edit with it (fix/edits/check-syntax.ts).
    packages.filter((name) => /^(tsx|typescript)(\/|$)/.test(name)),
    [],
    'no compiler or loader is imported',
  );
  assert.deepEqual(
    [...imported].filter((specifier) => specifier.endsWith('.ts')),
    [],
    'no TypeScript source is imported',
  );
  const help = spawnSync(process.execPath, ['bin/gateway.js', '--help'], { encoding: 'utf8' });
  assert.equal(help.status, 0, help.stderr);
  assert.match(help.stdout, /Usage: gateway <command>/);
});
