import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';

const root = new URL('..', import.meta.url).pathname;
const own = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines: { node: string } };

test('every runtime dependency accepts the oldest Node this package names, so npm ci there warns about none', () => {
  const oldest = semver.minVersion(own.engines.node);
  assert.ok(oldest, `package.json engines.node (${own.engines.node}) names a version`);
  const paths = execFileSync('npm', ['ls', '--omit=dev', '--all', '--parseable'], { cwd: root, encoding: 'utf8' }).trim().split('\n').slice(1);
  assert.ok(paths.length > 20, 'npm ls lists the runtime dependency tree');
  const refusing: string[] = [];
  for (const path of paths) {
    const manifest = JSON.parse(readFileSync(join(path, 'package.json'), 'utf8')) as { name: string; version: string; engines?: { node?: string } };
    const wanted = manifest.engines?.node;
    if (wanted && !semver.satisfies(oldest, wanted)) refusing.push(`${manifest.name}@${manifest.version} wants node ${wanted}`);
  }
  assert.deepEqual(refusing, [], `on Node ${oldest}`);
});
