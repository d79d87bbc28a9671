// Builds the server and CLI into dist/server: src/cli/main.ts and what it imports (see
// bundle-server.mjs). `gateway start` loads only what it uses: the HTTP stack is its own chunk,
// which key and funds commands never load. Run by `npm ci` (prepare), `npm run build` and
// `npm test`; takes well under a second.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleServer } from './bundle-server.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
await bundleServer(join(root, 'dist', 'server'), { main: join(root, 'src', 'cli', 'main.ts') });
