import type { FixTier } from '../storage/records.ts';

/** What an agent takes: the files it may change, files it must leave alone, and what went wrong. */
export interface FixAgent {
  id: string;
  name: string;
  description: string;
  /** The input fields, as GET /v1/fix/agents documents them. */
  input: Record<string, string>;
  /** Model calls a run may make unless the quote asks for fewer. */
  defaultSteps: number;
  /** The agent's task, first in the system prompt. */
  task: string;
}

export const FIX_TIERS: readonly FixTier[] = ['fast', 'balanced', 'best'];

/** The alias that serves a tier. */
export function aliasOfTier(tier: FixTier): string {
  return `svc/${tier}`;
}

/** Most model calls a quote may ask for. */
export const MAX_STEPS = 8;

const commonInput = {
  files: 'array of {path, content}: the files the agent may change (UTF-8 text, relative paths)',
  command: 'string, optional: the command that failed, e.g. "npm test"',
  output: 'string, optional: what the command printed (the end of it is enough)',
  instruction: 'string, optional: what to fix, in your words',
  max_steps: `integer 1-${MAX_STEPS}, optional: model calls the run may make`,
  max_cost: "USD decimal string, optional: never hold or charge more than this (at least one step's worst case)",
};

export const fixAgents: readonly FixAgent[] = [
  {
    id: 'code-fix',
    name: 'Code fix',
    description:
      'Fixes code that fails: give it the files, the failing command and its output, or an instruction; it returns a unified diff that applies with git apply and patch -p1, and explains it.',
    input: commonInput,
    defaultSteps: 3,
    task: 'You fix code. You get source files, and a failing command with its output or an instruction. Find the cause and fix it with the smallest correct change.',
  },
  {
    id: 'test-fix',
    name: 'Make failing tests pass',
    description:
      'Makes failing tests pass by changing the code under test, never the tests: give it the source files, the test files (read-only) and the failing test output.',
    input: {
      ...commonInput,
      tests: 'array of {path, content}: the failing tests; read-only, an edit to them is refused',
    },
    defaultSteps: 3,
    task: 'You make failing tests pass. You get source files, test files and the failing test output. The tests are right: change only the source files, never a test file.',
  },
];

export function findAgent(id: string): FixAgent | undefined {
  return fixAgents.find((agent) => agent.id === id);
}
