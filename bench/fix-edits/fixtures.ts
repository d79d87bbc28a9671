/**
 * The small files the corpus replies edit. Kept as strings, not files on disk, so that the CRLF
 * file and the file without a final newline cannot be normalised by git or an editor.
 */
import type { SourceFile } from '../../src/fix/edits/source-file.ts';

/** LF text to CRLF, for the Windows-style file. */
export const crlf = (text: string): string => text.replace(/\n/g, '\r\n');

export const math = `export function add(a, b) {
  return a + b;
}

export function subtract(a, b) {
  return a - b;
}

export function clamp(value, min, max) {
  if (value < min) return min;
  if (value > max) return max;
  return value;
}
`;

export const cart = `import type { Item } from './item.ts';

export class Cart {
  private items: Item[] = [];

  add(item: Item): void {
    this.items.push(item);
  }

  total(): number {
    let total = 0;
    for (const item of this.items) {
      total += item.price * item.quantity;
    }
    return total;
  }

  count(): number {
    let total = 0;
    for (const item of this.items) {
      total += item.quantity;
    }
    return total;
  }
}
`;

export const config = `{
  "name": "demo",
  "port": 8080,
  "features": {
    "search": true,
    "export": false
  }
}
`;

export const util = `import os


def read_config(path):
    with open(path) as handle:
        return handle.read()


def env_flag(name, default=False):
    value = os.environ.get(name)
    if value is None:
        return default
    return value.lower() in ("1", "true", "yes")
`;

export const legacy = crlf(`'use strict';

function greet(name) {
  return 'Hello, ' + name;
}

module.exports = { greet };
`);

/** No final newline. */
export const version = `export const VERSION = '1.2.3';
export const NAME = 'demo';`;

export const tabs = `export function sum(list) {
\tlet total = 0;
\tfor (const value of list) {
\t\ttotal += value;
\t}
\treturn total;
}
`;

export const mathTest = `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { add } from '../src/math.js';

test('add', () => {
  assert.equal(add(1, 2), 3);
});
`;

export const fixtures: readonly SourceFile[] = [
  { path: 'src/math.js', content: math },
  { path: 'src/cart.ts', content: cart },
  { path: 'config.json', content: config },
  { path: 'app/util.py', content: util },
  { path: 'src/legacy.js', content: legacy },
  { path: 'src/version.ts', content: version },
  { path: 'src/tabs.js', content: tabs },
  { path: 'test/math.test.js', content: mathTest },
];
