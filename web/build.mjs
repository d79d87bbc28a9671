// Builds the console's pages into dist/console: one bundle (Preact and mipd; the charts are SVG) and one
// stylesheet with content hashes in their names, and index.html naming them. Run by `npm ci`
// (prepare) and `npm start` (prestart); takes well under a second.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = dirname(fileURLToPath(import.meta.url));
const out = join(root, '..', 'dist', 'console');
const assets = join(out, 'assets');

const result = await build({
  entryPoints: { app: join(root, 'src', 'main.tsx') },
  bundle: true,
  minify: true,
  sourcemap: false,
  format: 'esm',
  target: ['chrome115', 'firefox115', 'safari16'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  write: false,
  outdir: 'out',
  entryNames: '[name]',
  logLevel: 'warning',
  legalComments: 'none',
});

rmSync(out, { recursive: true, force: true });
mkdirSync(assets, { recursive: true });
const named = {};
for (const file of result.outputFiles) {
  const extension = file.path.slice(file.path.lastIndexOf('.'));
  const hash = createHash('sha256').update(file.contents).digest('hex').slice(0, 12);
  const name = `app-${hash}${extension}`;
  writeFileSync(join(assets, name), file.contents);
  named[extension] = name;
}
const html = readFileSync(join(root, 'index.html'), 'utf8')
  .replace('%SCRIPT%', `/console/assets/${named['.js']}`)
  .replace('%STYLE%', `/console/assets/${named['.css']}`);
writeFileSync(join(out, 'index.html'), html);
console.log(`console built: ${Object.values(named).join(', ')}`);
