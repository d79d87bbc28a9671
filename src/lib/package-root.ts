import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The directory of the nearest package.json above `moduleUrl` (a module's import.meta.url): the
 * checkout's root, whether the module runs from src/ or from the compiled build in dist/server/.
 */
export function packageRoot(moduleUrl: string): string {
  let directory = dirname(fileURLToPath(moduleUrl));
  while (!existsSync(join(directory, 'package.json'))) {
    const parent = dirname(directory);
    if (parent === directory) throw new Error(`no package.json above ${fileURLToPath(moduleUrl)}`);
    directory = parent;
  }
  return directory;
}
