import { z } from 'zod';
import { GatewayError } from '../errors/gateway-error.ts';
import { parseUsd } from '../lib/money.ts';
import type { FixTier } from '../storage/records.ts';
import type { SourceFile } from './edits/source-file.ts';
import { FIX_TIERS, findAgent, MAX_STEPS, type FixAgent } from './fix-agents.ts';

/** What a fix agent works on. */
export interface FixInput {
  /** Files the agent may change. */
  files: SourceFile[];
  /** Files it must leave as they are (the tests of test-fix). */
  tests: SourceFile[];
  command?: string;
  output?: string;
  instruction?: string;
}

/** A validated POST /v1/fix/quote body. */
export interface QuoteAsk {
  agent: FixAgent;
  tier: FixTier;
  input: FixInput;
  maxSteps?: number;
  maxCostNano?: number;
}

const MAX_FILES = 100;
const MAX_PATH_LENGTH = 300;

/** A relative path with forward slashes, inside the project: no `..`, no absolute path, nothing a shell or git would misread. */
const path = z
  .string()
  .min(1)
  .max(MAX_PATH_LENGTH)
  .refine((value) => !value.startsWith('/') && !/^[a-zA-Z]:/.test(value), 'must be relative')
  .refine(
    (value) => !value.split('/').some((segment) => segment === '..' || segment === '.' || segment === ''),
    'must not contain "..", "." or empty segments',
  )
  .refine((value) => /^[\w@+=,.~-]+(\/[\w@+=,.~-]+)*$/.test(value), 'may hold letters, digits, / and @+=,.~_- only');

const file = z.object({ path, content: z.string() }).strict();

const body = z
  .object({
    agent: z.string(),
    tier: z.enum(FIX_TIERS as [FixTier, ...FixTier[]]),
    files: z.array(file).min(1).max(MAX_FILES),
    tests: z.array(file).max(MAX_FILES).optional(),
    command: z.string().max(10_000).optional(),
    output: z.string().optional(),
    instruction: z.string().optional(),
    max_steps: z.number().int().min(1).max(MAX_STEPS).optional(),
    max_cost: z.string().optional(),
  })
  .strict();

function fieldName(issue: z.ZodIssue): string {
  return issue.path.reduce<string>((name, part) => (typeof part === 'number' ? `${name}[${part}]` : name ? `${name}.${part}` : part), '');
}

/** The body of POST /v1/fix/quote, or invalid_request naming the field. */
export function parseQuoteRequest(raw: unknown): QuoteAsk {
  const parsed = body.safeParse(raw ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = fieldName(issue);
    throw new GatewayError('invalid_request', field ? `${field}: ${issue.message}` : issue.message);
  }
  const value = parsed.data;
  const agent = findAgent(value.agent);
  if (!agent) throw new GatewayError('invalid_request', `agent: no agent "${value.agent}"; GET /v1/fix/agents lists them`);
  const tests = value.tests ?? [];
  if (agent.id === 'test-fix' && tests.length === 0) throw new GatewayError('invalid_request', 'tests: test-fix needs the failing tests');
  if (agent.id !== 'test-fix' && tests.length > 0) throw new GatewayError('invalid_request', `tests: ${agent.id} takes no tests; use test-fix`);
  const seen = new Set<string>();
  for (const entry of [...value.files, ...tests]) {
    if (seen.has(entry.path)) throw new GatewayError('invalid_request', `files: ${entry.path} is given twice`);
    seen.add(entry.path);
  }
  if (!value.command && !value.output && !value.instruction) {
    throw new GatewayError('invalid_request', 'instruction: say what to fix (instruction), or give the failing command and its output');
  }
  let maxCostNano: number | undefined;
  if (value.max_cost !== undefined) {
    try {
      maxCostNano = parseUsd(value.max_cost);
    } catch (error) {
      throw new GatewayError('invalid_request', `max_cost: ${(error as Error).message}`);
    }
  }
  return {
    agent,
    tier: value.tier,
    input: { files: value.files, tests, command: value.command, output: value.output, instruction: value.instruction },
    maxSteps: value.max_steps,
    maxCostNano,
  };
}
