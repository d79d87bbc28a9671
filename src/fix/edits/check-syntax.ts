import type { Loader, Message } from 'esbuild';
import type { SourceFile } from './source-file.ts';

const loaders: Readonly<Record<string, Loader>> = {
  '.js': 'js',
  '.mjs': 'js',
  '.cjs': 'js',
  '.jsx': 'jsx',
  '.ts': 'ts',
  '.mts': 'ts',
  '.cts': 'ts',
  '.tsx': 'tsx',
};

/**
 * Syntax problems of a file, by its extension; each names the file, line and column. Other
 * extensions: none. Scripts are parsed by esbuild's long-lived service process, off the event
 * loop (its synchronous API would stall every other request while it starts and parses).
 */
export async function checkSyntax(file: SourceFile): Promise<string[]> {
  const extension = /\.[^./]+$/.exec(file.path)?.[0].toLowerCase() ?? '';
  if (extension === '.json') return checkJson(file);
  const loader = loaders[extension];
  return loader ? checkScript(file, loader) : [];
}

function checkJson(file: SourceFile): string[] {
  try {
    JSON.parse(file.content);
    return [];
  } catch (error) {
    const message = (error as Error).message;
    const position = /at position (\d+)/.exec(message);
    const offset = position ? Number(position[1]) : file.content.length;
    const { line, column } = lineAndColumn(file.content, offset);
    const reason = message.replace(/\s*(?:in JSON )?at position \d+.*$/, '').replace(/\s*\(line \d+ column \d+\)$/, '');
    return [`${file.path}:${line}:${column}: invalid JSON: ${reason}`];
  }
}

async function checkScript(file: SourceFile, loader: Loader): Promise<string[]> {
  try {
    // Loaded on the first check: a gateway that never runs a fix does not carry esbuild.
    const { transform } = await import('esbuild');
    await transform(file.content, { loader, sourcefile: file.path, logLevel: 'silent' });
    return [];
  } catch (error) {
    const messages = (error as { errors?: Message[] }).errors;
    if (!messages) return [`${file.path}: could not be checked: ${(error as Error).message}`];
    return messages.map((message) => {
      const at = message.location ? `${message.location.line}:${message.location.column + 1}` : '1:1';
      return `${file.path}:${at}: ${message.text}`;
    });
  }
}

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return { line, column: offset - (before.lastIndexOf('\n') + 1) + 1 };
}
