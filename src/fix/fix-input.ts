import { z } from 'zod';
import { GatewayError } from '../errors/gateway-error.ts';
import { parseUsd } from '../lib/money.ts';
import type { FixTier } from '../storage/records.ts';
import type { SourceFile } from './edits/source-file.ts';
import { FIX_TIERS, findAgent, MAX_STEPS, type FixAgent } from './fix-agents.ts';
import { fixRunRequestSchema } from './fix-schemas.ts';

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

const file = z.object({ path: path.describe('Relative, forward slashes, inside the project'), content: z.string() }).strict();

/** The body of POST /v1/fix/quote; the checks across fields follow in parseQuoteRequest. */
export const fixQuoteRequestSchema = z
  .object({
    agent: z.string().describe('An agent id from GET /v1/fix/agents'),
    tier: z.enum(FIX_TIERS as [FixTier, ...FixTier[]]),
    files: z.array(file).min(1).max(MAX_FILES).describe('The files the agent may change'),
    tests: z.array(file).max(MAX_FILES).optional().describe('test-fix only: the failing tests, read-only'),
    command: z.string().max(10_000).optional().describe('The failing command'),
    output: z.string().optional().describe('Its output'),
    instruction: z.string().optional().describe('What to fix; needed when no command and output are given'),
    max_steps: z.number().int().min(1).max(MAX_STEPS).optional().describe("Model calls the run may make (default: the agent's)"),
    max_cost: z.string().optional().describe('Most the run may cost, USD as a decimal string'),
  })
  .strict();

function fieldName(issue: z.ZodIssue): string {
  return issue.path.reduce<string>((name, part) => (typeof part === 'number' ? `${name}[${part}]` : name ? `${name}.${part}` : part), '');
}

/** The body of POST /v1/fix/quote, or invalid_request naming the field. */
export function parseQuoteRequest(raw: unknown): QuoteAsk {
  const parsed = fixQuoteRequestSchema.safeParse(raw ?? {});
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

/** The body of POST /v1/fix/runs, or invalid_request naming the field. */
export function parseRunRequest(raw: unknown): { quote: string; stream: boolean } {
  const parsed = fixRunRequestSchema.safeParse(raw ?? {});
  if (parsed.success) return { quote: parsed.data.quote, stream: parsed.data.stream === true };
  const issue = parsed.error.issues[0]!;
  if (issue.path[0] === 'quote') throw new GatewayError('invalid_request', 'quote: the id of a quote from POST /v1/fix/quote is required');
  if (issue.path[0] === 'stream') throw new GatewayError('invalid_request', 'stream must be a boolean');
  if (issue.code === 'unrecognized_keys') throw new GatewayError('invalid_request', `${issue.keys[0]}: unknown field`);
  throw new GatewayError('invalid_request', 'The body must be a JSON object.');
}
