/**
 * Runs every corpus case through parseEdits + applyEdits, and checks the patch of each applied
 * case with a real `git apply --check` against the original files.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { applyEdits } from '../../src/fix/edits/apply-edits.ts';
import { parseEdits } from '../../src/fix/edits/parse-edits.ts';
import type { SourceFile } from '../../src/fix/edits/source-file.ts';
import { writePatch } from '../../src/fix/edits/write-patch.ts';
import { cases, type EditCase } from './cases.ts';
import { fixtures } from './fixtures.ts';

export type Verdict = 'applied exactly' | 'refused as expected' | 'applied wrongly' | 'refused wrongly';

export interface CaseResult {
  name: string;
  verdict: Verdict;
  /** Why, in a few words: the first problem of a refusal, or what differed. */
  detail: string;
}

export function runCorpus(): CaseResult[] {
  return cases.map(runCase);
}

export function runCase(testCase: EditCase): CaseResult {
  const given = fixtures.filter((file) => testCase.given?.includes(file.path) ?? true);
  const parsed = parseEdits(testCase.reply, given.map((file) => file.path));
  const outcome =
    parsed.problems.length > 0
      ? ({ ok: false, problems: parsed.problems } as const)
      : applyEdits(given, parsed.edits, { readOnly: new Set(testCase.readOnly ?? []) });
  const result = (verdict: Verdict, detail: string): CaseResult => ({ name: testCase.name, verdict, detail });
  if (!outcome.ok) {
    return result(testCase.expect === 'refused' ? 'refused as expected' : 'refused wrongly', outcome.problems[0] ?? '');
  }
  if (testCase.expect === 'refused') return result('applied wrongly', `touched ${outcome.touched.join(', ')}`);
  const wanted = new Map(given.map((file) => [file.path, file.content]));
  for (const [path, content] of Object.entries(testCase.expect)) wanted.set(path, content);
  const got = new Map(outcome.files.map((file) => [file.path, file.content]));
  const differing = [...new Set([...wanted.keys(), ...got.keys()])].filter((path) => wanted.get(path) !== got.get(path));
  if (differing.length > 0) return result('applied wrongly', `contents differ: ${differing.join(', ')}`);
  const patchProblem = checkPatch(given, outcome.files);
  if (patchProblem) return result('applied wrongly', patchProblem);
  return result('applied exactly', outcome.touched.join(', '));
}

/** What `git apply --check` says about the patch against the original files, or undefined when it applies. */
function checkPatch(before: readonly SourceFile[], after: readonly SourceFile[]): string | undefined {
  const patch = writePatch(before, after);
  if (patch === '') return 'the patch is empty';
  const directory = mkdtempSync(join(os.tmpdir(), 'fix-edits-'));
  try {
    for (const file of before) {
      mkdirSync(dirname(join(directory, file.path)), { recursive: true });
      writeFileSync(join(directory, file.path), file.content);
    }
    writeFileSync(join(directory, 'change.patch'), patch);
    const git = spawnSync('git', ['apply', '--check', 'change.patch'], { cwd: directory, encoding: 'utf8' });
    return git.status === 0 ? undefined : `git apply --check: ${git.stderr.trim()}`;
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}
