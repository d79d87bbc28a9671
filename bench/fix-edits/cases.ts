/**
 * Model-style edit replies for the fixtures, each with the outcome a careful reviewer expects:
 * the exact contents of the files that change (all others must stay as they were), or 'refused'.
 */
import { cart, config, crlf, legacy, math, tabs, util, version } from './fixtures.ts';

export interface EditCase {
  name: string;
  reply: string;
  /** Paths given to the model; all fixtures when absent. */
  given?: readonly string[];
  readOnly?: readonly string[];
  expect: 'refused' | Readonly<Record<string, string>>;
}

const F = '```';

/** `text` with the one occurrence of `from` replaced; throws when `from` is missing or repeated, so expectations stay exact. */
function swap(text: string, from: string, to: string): string {
  const at = text.indexOf(from);
  if (at < 0 || text.indexOf(from, at + 1) >= 0) throw new Error(`corpus: ${JSON.stringify(from)} is not in the fixture exactly once`);
  return text.slice(0, at) + to + text.slice(at + from.length);
}

const typeCheck = "  if (typeof a !== 'number' || typeof b !== 'number') throw new TypeError('numbers only');";
const addChecked = swap(math, '  return a + b;', `${typeCheck}\n  return a + b;`);
const maxLine = '  if (value > max) return max;';
const nanGuarded = (text: string): string => swap(text, maxLine, `${maxLine}\n  if (Number.isNaN(value)) return min;`);
const totalStart = '  total(): number {\n    let total = 0;\n';
const countEnd = '      total += item.quantity;\n    }\n';
const countClamped = swap(cart, `${countEnd}    return total;`, `${countEnd}    return Math.max(0, total);`);
const subtractFixed = swap(math, '  return a - b;', '  return b - a;');
const portChanged = swap(config, '"port": 8080', '"port": 9090');
const flagStricter = swap(util, 'return value.lower() in ("1", "true", "yes")', 'return value.strip().lower() in ("1", "true", "yes", "on")');
const greetLoud = swap(legacy, "  return 'Hello, ' + name;", "  return 'Hello, ' + name + '!';");

export const cases: readonly EditCase[] = [
  // --- search/replace blocks, every way of naming the file
  {
    name: 'sr-path-line-before-fence',
    reply: `The add function should reject non-numbers.

src/math.js
${F}js
<<<<<<< SEARCH
export function add(a, b) {
  return a + b;
}
=======
export function add(a, b) {
  if (typeof a !== 'number' || typeof b !== 'number') throw new TypeError('numbers only');
  return a + b;
}
>>>>>>> REPLACE
${F}
`,
    expect: { 'src/math.js': addChecked },
  },
  {
    name: 'sr-path-in-info-string',
    reply: `${F}js src/math.js
<<<<<<< SEARCH
  return a - b;
=======
  return b - a;
>>>>>>> REPLACE
${F}`,
    expect: { 'src/math.js': subtractFixed },
  },
  {
    name: 'sr-path-bold',
    reply: `Fix the order:

**src/math.js**
${F}
<<<<<<< SEARCH
  return a - b;
=======
  return b - a;
>>>>>>> REPLACE
${F}
That's all.`,
    expect: { 'src/math.js': subtractFixed },
  },
  {
    name: 'sr-path-backticks-colon',
    reply: `\`config.json\`:
${F}json
<<<<<<< SEARCH
  "port": 8080,
=======
  "port": 9090,
>>>>>>> REPLACE
${F}`,
    expect: { 'config.json': portChanged },
  },
  {
    name: 'sr-path-first-line-in-fence',
    reply: `${F}
app/util.py
<<<<<<< SEARCH
    return value.lower() in ("1", "true", "yes")
=======
    return value.strip().lower() in ("1", "true", "yes", "on")
>>>>>>> REPLACE
${F}`,
    expect: { 'app/util.py': flagStricter },
  },
  {
    name: 'sr-bare-unfenced',
    reply: `Change the port.
config.json
<<<<<<< SEARCH
  "port": 8080,
=======
  "port": 9090,
>>>>>>> REPLACE
Done.`,
    expect: { 'config.json': portChanged },
  },
  {
    name: 'sr-two-blocks-one-fence',
    reply: `src/math.js
${F}js
<<<<<<< SEARCH
  return a - b;
=======
  return b - a;
>>>>>>> REPLACE
<<<<<<< SEARCH
  if (value > max) return max;
=======
  if (value > max) return max;
  if (Number.isNaN(value)) return min;
>>>>>>> REPLACE
${F}`,
    expect: { 'src/math.js': nanGuarded(subtractFixed) },
  },
  {
    name: 'sr-two-files',
    reply: `src/math.js
${F}js
<<<<<<< SEARCH
  return a - b;
=======
  return b - a;
>>>>>>> REPLACE
${F}

config.json
${F}json
<<<<<<< SEARCH
  "port": 8080,
=======
  "port": 9090,
>>>>>>> REPLACE
${F}`,
    expect: { 'src/math.js': subtractFixed, 'config.json': portChanged },
  },
  {
    name: 'sr-create-file',
    reply: `A helper for formatting:

src/format.js
${F}js
<<<<<<< SEARCH
=======
export function formatPrice(cents) {
  return (cents / 100).toFixed(2);
}
>>>>>>> REPLACE
${F}`,
    expect: { 'src/format.js': 'export function formatPrice(cents) {\n  return (cents / 100).toFixed(2);\n}\n' },
  },
  {
    name: 'sr-second-edit-builds-on-first',
    reply: `src/math.js
${F}
<<<<<<< SEARCH
  return a - b;
=======
  return b - a;
>>>>>>> REPLACE
${F}
src/math.js
${F}
<<<<<<< SEARCH
  return b - a;
=======
  return Number(b) - Number(a);
>>>>>>> REPLACE
${F}`,
    expect: { 'src/math.js': swap(math, '  return a - b;', '  return Number(b) - Number(a);') },
  },
  {
    name: 'sr-delete-lines',
    reply: `src/math.js
${F}
<<<<<<< SEARCH
export function subtract(a, b) {
  return a - b;
}

=======
>>>>>>> REPLACE
${F}`,
    expect: { 'src/math.js': swap(math, 'export function subtract(a, b) {\n  return a - b;\n}\n\n', '') },
  },
  {
    name: 'sr-unique-among-similar-methods',
    reply: `src/cart.ts
${F}ts
<<<<<<< SEARCH
      total += item.quantity;
    }
    return total;
=======
      total += item.quantity;
    }
    return Math.max(0, total);
>>>>>>> REPLACE
${F}`,
    expect: { 'src/cart.ts': countClamped },
  },
  {
    name: 'sr-only-file-given-no-path',
    given: ['config.json'],
    reply: `${F}
<<<<<<< SEARCH
  "port": 8080,
=======
  "port": 9090,
>>>>>>> REPLACE
${F}`,
    expect: { 'config.json': portChanged },
  },

  // --- unified diffs
  {
    name: 'diff-git-prefixes',
    reply: `${F}diff
--- a/src/math.js
+++ b/src/math.js
@@ -5,3 +5,3 @@
 export function subtract(a, b) {
-  return a - b;
+  return b - a;
 }
${F}`,
    expect: { 'src/math.js': subtractFixed },
  },
  {
    name: 'diff-no-prefixes',
    reply: `${F}diff
--- config.json
+++ config.json
@@ -2,3 +2,3 @@
   "name": "demo",
-  "port": 8080,
+  "port": 9090,
   "features": {
${F}`,
    expect: { 'config.json': portChanged },
  },
  {
    name: 'diff-git-header-and-index',
    reply: `${F}diff
diff --git a/app/util.py b/app/util.py
index 3b18e51..a2c4f0d 100644
--- a/app/util.py
+++ b/app/util.py
@@ -12,4 +12,4 @@ def env_flag(name, default=False):
     if value is None:
         return default
-    return value.lower() in ("1", "true", "yes")
+    return value.strip().lower() in ("1", "true", "yes", "on")
${F}`,
    expect: { 'app/util.py': flagStricter },
  },
  {
    name: 'diff-bare-with-prose-after',
    reply: `Here is the patch:

--- a/src/math.js
+++ b/src/math.js
@@ -6 +6 @@
-  return a - b;
+  return b - a;

This swaps the operands.`,
    expect: { 'src/math.js': subtractFixed },
  },
  {
    name: 'diff-wrong-line-counts',
    reply: `${F}diff
--- a/src/math.js
+++ b/src/math.js
@@ -1,9 +1,2 @@
 export function add(a, b) {
+  if (typeof a !== 'number' || typeof b !== 'number') throw new TypeError('numbers only');
   return a + b;
 }
${F}`,
    expect: { 'src/math.js': addChecked },
  },
  {
    name: 'diff-two-hunks',
    reply: `${F}diff
--- a/src/math.js
+++ b/src/math.js
@@ -1,3 +1,4 @@
 export function add(a, b) {
+  if (typeof a !== 'number' || typeof b !== 'number') throw new TypeError('numbers only');
   return a + b;
 }
@@ -5,3 +6,3 @@
 export function subtract(a, b) {
-  return a - b;
+  return b - a;
 }
${F}`,
    expect: { 'src/math.js': swap(addChecked, '  return a - b;', '  return b - a;') },
  },
  {
    name: 'diff-new-file',
    reply: `${F}diff
--- /dev/null
+++ b/src/format.js
@@ -0,0 +1,3 @@
+export function formatPrice(cents) {
+  return (cents / 100).toFixed(2);
+}
${F}`,
    expect: { 'src/format.js': 'export function formatPrice(cents) {\n  return (cents / 100).toFixed(2);\n}\n' },
  },
  {
    name: 'diff-line-number-picks-between-identical-places',
    reply: `${F}diff
--- a/src/cart.ts
+++ b/src/cart.ts
@@ -22,3 +22,3 @@
     }
-    return total;
+    return Math.max(0, total);
   }
${F}`,
    expect: { 'src/cart.ts': countClamped },
  },
  {
    name: 'diff-blank-context-without-space',
    reply: `${F}diff
--- a/src/math.js
+++ b/src/math.js
@@ -3,5 +3,5 @@
 }

 export function subtract(a, b) {
-  return a - b;
+  return b - a;
 }
${F}`,
    expect: { 'src/math.js': subtractFixed },
  },
  {
    name: 'diff-two-files',
    reply: `${F}diff
diff --git a/src/math.js b/src/math.js
--- a/src/math.js
+++ b/src/math.js
@@ -6 +6 @@
-  return a - b;
+  return b - a;
diff --git a/config.json b/config.json
--- a/config.json
+++ b/config.json
@@ -3 +3 @@
-  "port": 8080,
+  "port": 9090,
${F}`,
    expect: { 'src/math.js': subtractFixed, 'config.json': portChanged },
  },

  // --- whole files
  {
    name: 'whole-file-info-string',
    reply: `Updated config:

${F}json config.json
{
  "name": "demo",
  "port": 9090,
  "features": {
    "search": true,
    "export": false
  }
}
${F}`,
    expect: { 'config.json': portChanged },
  },
  {
    name: 'whole-file-path-line-keeps-missing-final-newline',
    reply: `src/version.ts
${F}ts
export const VERSION = '1.3.0';
export const NAME = 'demo';
${F}`,
    expect: { 'src/version.ts': "export const VERSION = '1.3.0';\nexport const NAME = 'demo';" },
  },
  {
    name: 'whole-file-backticks-colon-python',
    reply: `\`app/util.py\`:
${F}python
import os


def read_config(path):
    with open(path) as handle:
        return handle.read()


def env_flag(name, default=False):
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in ("1", "true", "yes", "on")
${F}`,
    expect: { 'app/util.py': flagStricter },
  },
  {
    name: 'whole-file-info-path-only',
    reply: `${F}src/tabs.js
export function sum(list) {
\tlet total = 0;
\tfor (const value of list) {
\t\ttotal += Number(value);
\t}
\treturn total;
}
${F}`,
    expect: { 'src/tabs.js': swap(tabs, 'total += value;', 'total += Number(value);') },
  },

  // --- drift the matchers absorb
  {
    name: 'drift-trailing-whitespace',
    reply: `src/math.js
${F}
<<<<<<< SEARCH
export function subtract(a, b) {   
  return a - b;  
=======
export function subtract(a, b) {
  return b - a;
>>>>>>> REPLACE
${F}`,
    expect: { 'src/math.js': subtractFixed },
  },
  {
    name: 'drift-blank-line-missing-in-search',
    reply: `src/math.js
${F}
<<<<<<< SEARCH
  return a + b;
}
export function subtract(a, b) {
  return a - b;
=======
  return a + b;
}
export function subtract(a, b) {
  return b - a;
>>>>>>> REPLACE
${F}`,
    expect: { 'src/math.js': subtractFixed },
  },
  {
    name: 'drift-blank-line-extra-in-search',
    reply: `app/util.py
${F}python
<<<<<<< SEARCH
    value = os.environ.get(name)

    if value is None:
        return default
=======
    value = os.environ.get(name)

    if value is None or value == "":
        return default
>>>>>>> REPLACE
${F}`,
    expect: { 'app/util.py': swap(util, '    if value is None:', '    if value is None or value == "":') },
  },
  {
    name: 'drift-blank-lines-and-insertion-between',
    reply: `src/math.js
${F}
<<<<<<< SEARCH
export function subtract(a, b) {
  return a - b;
}
export function clamp(value, min, max) {
=======
export function subtract(a, b) {
  return a - b;
}

export function multiply(a, b) {
  return a * b;
}
export function clamp(value, min, max) {
>>>>>>> REPLACE
${F}`,
    expect: { 'src/math.js': swap(math, '  return a - b;\n}\n\n', '  return a - b;\n}\n\nexport function multiply(a, b) {\n  return a * b;\n}\n\n') },
  },
  {
    name: 'drift-indentation-less',
    reply: `src/cart.ts
${F}ts
<<<<<<< SEARCH
add(item: Item): void {
  this.items.push(item);
}
=======
add(item: Item): void {
  if (item.quantity <= 0) return;
  this.items.push(item);
}
>>>>>>> REPLACE
${F}`,
    expect: { 'src/cart.ts': swap(cart, '    this.items.push(item);', '    if (item.quantity <= 0) return;\n    this.items.push(item);') },
  },
  {
    name: 'drift-indentation-more',
    reply: `app/util.py
${F}python
<<<<<<< SEARCH
        def read_config(path):
            with open(path) as handle:
                return handle.read()
=======
        def read_config(path):
            with open(path, encoding="utf-8") as handle:
                return handle.read()
>>>>>>> REPLACE
${F}`,
    expect: { 'app/util.py': swap(util, 'with open(path) as handle:', 'with open(path, encoding="utf-8") as handle:') },
  },
  {
    name: 'drift-spaces-for-tabs',
    reply: `src/tabs.js
${F}js
<<<<<<< SEARCH
  for (const value of list) {
    total += value;
  }
=======
  for (const value of list) {
    if (typeof value !== 'number') continue;
    total += value;
  }
>>>>>>> REPLACE
${F}`,
    expect: { 'src/tabs.js': swap(tabs, '\t\ttotal += value;', "\t\tif (typeof value !== 'number') continue;\n\t\ttotal += value;") },
  },
  {
    name: 'drift-diff-dedented-hunk',
    reply: `${F}diff
--- a/src/cart.ts
+++ b/src/cart.ts
@@ -10,3 +10,4 @@
 total(): number {
   let total = 0;
+  if (this.items.length === 0) return 0;
   for (const item of this.items) {
${F}`,
    expect: { 'src/cart.ts': swap(cart, totalStart, `${totalStart}    if (this.items.length === 0) return 0;\n`) },
  },

  // --- line endings and final newlines
  {
    name: 'crlf-search-replace',
    reply: `src/legacy.js
${F}js
<<<<<<< SEARCH
function greet(name) {
  return 'Hello, ' + name;
}
=======
function greet(name) {
  return 'Hello, ' + name + '!';
}
>>>>>>> REPLACE
${F}`,
    expect: { 'src/legacy.js': greetLoud },
  },
  {
    name: 'crlf-diff-adds-lines',
    reply: `${F}diff
--- a/src/legacy.js
+++ b/src/legacy.js
@@ -5,3 +5,7 @@
 }
 
+function bye(name) {
+  return 'Bye, ' + name;
+}
+
 module.exports = { greet };
${F}`,
    expect: { 'src/legacy.js': swap(legacy, '\r\nmodule.exports', crlf("\nfunction bye(name) {\n  return 'Bye, ' + name;\n}\n\nmodule.exports")) },
  },
  {
    name: 'crlf-whole-file',
    reply: `src/legacy.js
${F}js
'use strict';

function greet(name) {
  return 'Hello, ' + name + '!';
}

module.exports = { greet };
${F}`,
    expect: { 'src/legacy.js': greetLoud },
  },
  {
    name: 'no-final-newline-edit-last-line',
    reply: `src/version.ts
${F}ts
<<<<<<< SEARCH
export const NAME = 'demo';
=======
export const NAME = 'demo-app';
>>>>>>> REPLACE
${F}`,
    expect: { 'src/version.ts': "export const VERSION = '1.2.3';\nexport const NAME = 'demo-app';" },
  },
  {
    name: 'no-final-newline-append-after-last-line',
    reply: `src/version.ts
${F}ts
<<<<<<< SEARCH
export const NAME = 'demo';
=======
export const NAME = 'demo';
export const BUILD = 7;
>>>>>>> REPLACE
${F}`,
    expect: { 'src/version.ts': "export const VERSION = '1.2.3';\nexport const NAME = 'demo';\nexport const BUILD = 7;" },
  },
  {
    name: 'no-final-newline-diff-adds-it',
    reply: `${F}diff
--- a/src/version.ts
+++ b/src/version.ts
@@ -1,2 +1,2 @@
 export const VERSION = '1.2.3';
-export const NAME = 'demo';
\\ No newline at end of file
+export const NAME = 'demo';
${F}`,
    expect: { 'src/version.ts': `${version}\n` },
  },

  // --- mixed formats in one reply
  {
    name: 'mixed-diff-and-search-replace',
    reply: `First the math:

${F}diff
--- a/src/math.js
+++ b/src/math.js
@@ -6 +6 @@
-  return a - b;
+  return b - a;
${F}

Then the config:

config.json
${F}json
<<<<<<< SEARCH
  "port": 8080,
=======
  "port": 9090,
>>>>>>> REPLACE
${F}`,
    expect: { 'src/math.js': subtractFixed, 'config.json': portChanged },
  },
  {
    name: 'mixed-whole-file-and-diff',
    reply: `${F}ts src/version.ts
export const VERSION = '2.0.0';
export const NAME = 'demo';
${F}

${F}diff
--- a/src/legacy.js
+++ b/src/legacy.js
@@ -4 +4 @@
-  return 'Hello, ' + name;
+  return 'Hello, ' + name + '!';
${F}`,
    expect: { 'src/version.ts': "export const VERSION = '2.0.0';\nexport const NAME = 'demo';", 'src/legacy.js': greetLoud },
  },
  {
    name: 'code-example-in-prose-is-not-an-edit',
    reply: `Callers can now write:

${F}js
clamp(NaN, 0, 1);
${F}

src/math.js
${F}js
<<<<<<< SEARCH
  if (value > max) return max;
=======
  if (value > max) return max;
  if (Number.isNaN(value)) return min;
>>>>>>> REPLACE
${F}`,
    expect: { 'src/math.js': nanGuarded(math) },
  },

  {
    name: 'quoted-read-only-test-is-not-an-edit',
    readOnly: ['test/math.test.js'],
    reply: `The test expects:

test/math.test.js
${F}js
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { add } from '../src/math.js';

test('add', () => {
  assert.equal(add(1, 2), 3);
});
${F}

so subtract is untouched, but let us harden add:

src/math.js
${F}js
<<<<<<< SEARCH
export function add(a, b) {
  return a + b;
}
=======
export function add(a, b) {
  if (typeof a !== 'number' || typeof b !== 'number') throw new TypeError('numbers only');
  return a + b;
}
>>>>>>> REPLACE
${F}`,
    expect: { 'src/math.js': addChecked },
  },

  // --- refusals: a wrong patch is worse than none
  {
    name: 'refuse-ambiguous-search',
    reply: `src/cart.ts
${F}ts
<<<<<<< SEARCH
    return total;
=======
    return Math.round(total);
>>>>>>> REPLACE
${F}`,
    expect: 'refused',
  },
  {
    name: 'refuse-ambiguous-diff-without-line-numbers',
    reply: `${F}diff
--- a/src/cart.ts
+++ b/src/cart.ts
@@ ... @@
     }
-    return total;
+    return Math.round(total);
   }
${F}`,
    expect: 'refused',
  },
  {
    name: 'refuse-ambiguous-diff-line-number-points-elsewhere',
    reply: `${F}diff
--- a/src/cart.ts
+++ b/src/cart.ts
@@ -13,3 +13,3 @@
     }
-    return total;
+    return Math.round(total);
   }
${F}`,
    expect: 'refused',
  },
  {
    name: 'refuse-ambiguous-after-indentation-drift',
    reply: `src/cart.ts
${F}ts
<<<<<<< SEARCH
let total = 0;
for (const item of this.items) {
=======
let total = 0;
if (!this.items) return 0;
for (const item of this.items) {
>>>>>>> REPLACE
${F}`,
    expect: 'refused',
  },
  {
    name: 'refuse-file-not-given',
    given: ['src/math.js'],
    reply: `config.json
${F}json
<<<<<<< SEARCH
  "port": 8080,
=======
  "port": 9090,
>>>>>>> REPLACE
${F}`,
    expect: 'refused',
  },
  {
    name: 'refuse-elided-existing-code-comment',
    reply: `src/math.js
${F}js
<<<<<<< SEARCH
export function clamp(value, min, max) {
  if (value < min) return min;
  if (value > max) return max;
  return value;
}
=======
export function clamp(value, min, max) {
  // ... existing code ...
  if (Number.isNaN(value)) return min;
  return value;
}
>>>>>>> REPLACE
${F}`,
    expect: 'refused',
  },
  {
    name: 'refuse-elided-whole-file',
    reply: `src/math.js
${F}js
export function add(a, b) {
  return a + b;
}

...

export function clamp(value, min, max) {
  return Math.min(max, Math.max(min, value));
}
${F}`,
    expect: 'refused',
  },
  {
    name: 'refuse-elided-python-rest-unchanged',
    reply: `app/util.py
${F}python
import os
import sys

# rest of the file unchanged
${F}`,
    expect: 'refused',
  },
  {
    name: 'refuse-elided-body-in-diff',
    reply: `${F}diff
--- a/src/math.js
+++ b/src/math.js
@@ -9,5 +9,3 @@
 export function clamp(value, min, max) {
-  if (value < min) return min;
-  if (value > max) return max;
-  return value;
+  /* ... */
 }
${F}`,
    expect: 'refused',
  },
  {
    name: 'refuse-read-only-test',
    readOnly: ['test/math.test.js'],
    reply: `test/math.test.js
${F}js
<<<<<<< SEARCH
  assert.equal(add(1, 2), 3);
=======
  assert.equal(add(1, 2), add(2, 1));
>>>>>>> REPLACE
${F}`,
    expect: 'refused',
  },
  {
    name: 'refuse-path-traversal',
    reply: `../outside.js
${F}js
<<<<<<< SEARCH
=======
console.log('escaped');
>>>>>>> REPLACE
${F}`,
    expect: 'refused',
  },
  {
    name: 'refuse-absolute-path-in-diff',
    reply: `${F}diff
--- /dev/null
+++ /tmp/evil.sh
@@ -0,0 +1 @@
+rm -rf ~
${F}`,
    expect: 'refused',
  },
  {
    name: 'refuse-git-directory',
    reply: `.git/hooks/pre-commit
${F}sh
<<<<<<< SEARCH
=======
#!/bin/sh
exit 0
>>>>>>> REPLACE
${F}`,
    expect: 'refused',
  },
  {
    name: 'refuse-no-edits',
    reply: `The bug is in subtract: the operands are swapped. Change \`a - b\` to \`b - a\` in src/math.js.`,
    expect: 'refused',
  },
  {
    name: 'refuse-search-not-found',
    reply: `src/math.js
${F}js
<<<<<<< SEARCH
export function multiply(a, b) {
  return a * b;
}
=======
export function multiply(a, b) {
  return a * b || 0;
}
>>>>>>> REPLACE
${F}`,
    expect: 'refused',
  },
  {
    name: 'refuse-empty-search-on-existing-file',
    reply: `config.json
${F}json
<<<<<<< SEARCH
=======
{ "name": "demo" }
>>>>>>> REPLACE
${F}`,
    expect: 'refused',
  },
  {
    name: 'refuse-unterminated-block',
    reply: `src/math.js
${F}js
<<<<<<< SEARCH
  return a - b;
=======
  return b - a;
${F}`,
    expect: 'refused',
  },
  {
    name: 'refuse-diff-without-path',
    reply: `${F}diff
@@ -6 +6 @@
-  return a - b;
+  return b - a;
${F}`,
    expect: 'refused',
  },
  {
    name: 'refuse-whole-file-for-unknown-path',
    reply: `${F}js src/format.js
export function formatPrice(cents) {
  return (cents / 100).toFixed(2);
}
${F}`,
    expect: 'refused',
  },
  {
    name: 'refuse-all-or-nothing',
    reply: `src/math.js
${F}js
<<<<<<< SEARCH
  return a - b;
=======
  return b - a;
>>>>>>> REPLACE
${F}

src/math.js
${F}js
<<<<<<< SEARCH
  return a / b;
=======
  return b === 0 ? 0 : a / b;
>>>>>>> REPLACE
${F}`,
    expect: 'refused',
  },
  {
    name: 'refuse-create-over-existing-file',
    reply: `${F}diff
--- /dev/null
+++ b/src/math.js
@@ -0,0 +1,3 @@
+export function add(a, b) {
+  return a + b;
+}
${F}`,
    expect: 'refused',
  },
  {
    name: 'refuse-block-whose-file-is-unsaid-after-an-unclosed-fence',
    reply: `src/math.js
${F}js
<<<<<<< SEARCH
  return a - b;
=======
  return b - a;
>>>>>>> REPLACE

src/cart.ts
${F}ts
<<<<<<< SEARCH
  return a + b;
=======
  return a + b + 0;
>>>>>>> REPLACE
${F}`,
    expect: 'refused',
  },
  {
    name: 'refuse-elided-markup-in-new-file',
    reply: `public/index.html
${F}html
<<<<<<< SEARCH
=======
<html>
  <body>
    <!-- ... -->
  </body>
</html>
>>>>>>> REPLACE
${F}`,
    expect: 'refused',
  },
];
