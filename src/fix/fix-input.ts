import { z } from 'zod';
import { GatewayError } from '../errors/gateway-error.ts';
import { parseUsd } from '../lib/money.ts';
import type { FixTier } from '../storage/records.ts';
import { unsafePathReason } from './edits/safe-path.ts';
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

/** A relative path with forward slashes inside the project (safe-path.ts says what is refused). */
const path = z
  .string()
  .min(1)
  .superRefine((value, context) => {
    const unsafe = unsafePathReason(value);
    if (unsafe) context.addIssue({ code: z.ZodIssueCode.custom, message: `refused: ${unsafe}` });
  });

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
    max_cost: z
      .union([z.string(), z.number()])
      .optional()
      .describe('Most the run may cost, USD: a decimal string ("0.25") or a JSON number (0.25), read exactly, to the nano-dollar'),
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
    throw new GatewayError('invalid_request', field ? `${field}: ${issue.message}` : issue.message, {}, field || null);
  }
  const value = parsed.data;
  const agent = findAgent(value.agent);
  if (!agent) throw fieldError('agent', `no agent "${value.agent}"; GET /v1/fix/agents lists them`);
  const tests = value.tests ?? [];
  if (agent.id === 'test-fix' && tests.length === 0) throw fieldError('tests', 'test-fix needs the failing tests');
  if (agent.id !== 'test-fix' && tests.length > 0) throw fieldError('tests', `${agent.id} takes no tests; use test-fix`);
  const seen = new Set<string>();
  const all = [...value.files, ...tests];
  for (const [index, entry] of all.entries()) {
    const field = index < value.files.length ? `files[${index}].path` : `tests[${index - value.files.length}].path`;
    if (seen.has(entry.path)) throw fieldError(field, `${entry.path} is given twice`);
    seen.add(entry.path);
  }
  if (!value.command && !value.output && !value.instruction) {
    throw fieldError('instruction', 'say what to fix (instruction), or give the failing command and its output');
  }
  return {
    agent,
    tier: value.tier,
    input: { files: value.files, tests, command: value.command, output: value.output, instruction: value.instruction },
    maxSteps: value.max_steps,
    maxCostNano: value.max_cost === undefined ? undefined : maxCostOf(value.max_cost),
  };
}

function fieldError(field: string, message: string): GatewayError {
  return new GatewayError('invalid_request', `${field}: ${message}`, {}, field);
}

/**
 * max_cost in nano-dollars, exactly: a decimal string as written, or a JSON number as the
 * shortest decimal that reads back as the same number (what the client wrote, unless it wrote
 * more digits than a double holds).
 */
function maxCostOf(raw: string | number): number {
  let text = raw;
  if (typeof raw === 'number') {
    if (!Number.isFinite(raw) || raw < 0) throw fieldError('max_cost', `${raw} is not a non-negative USD amount like 0.25`);
    text = /e/i.test(String(raw)) ? plainDecimal(raw) : String(raw);
  }
  try {
    return parseUsd(text as string);
  } catch (error) {
    throw fieldError('max_cost', (error as Error).message);
  }
}

/** A number JavaScript writes with an exponent (1e-7, 1e21) as plain decimal digits. */
function plainDecimal(value: number): string {
  const [mantissa, exponentText] = value.toExponential().split('e') as [string, string];
  const exponent = Number(exponentText);
  const [whole, fraction = ''] = mantissa.split('.') as [string, string?];
  const digits = whole + fraction;
  const point = whole.length + exponent;
  if (point <= 0) return `0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return digits + '0'.repeat(point - digits.length);
  return `${digits.slice(0, point)}.${digits.slice(point)}`;
}

/** The body of POST /v1/fix/runs, or invalid_request naming the field. */
export function parseRunRequest(raw: unknown): { quote: string; stream: boolean } {
  const parsed = fixRunRequestSchema.safeParse(raw ?? {});
  if (parsed.success) return { quote: parsed.data.quote, stream: parsed.data.stream === true };
  const issue = parsed.error.issues[0]!;
  if (issue.path[0] === 'quote') throw fieldError('quote', 'the id of a quote from POST /v1/fix/quote is required');
  if (issue.path[0] === 'stream') throw fieldError('stream', 'must be a boolean');
  if (issue.code === 'unrecognized_keys') throw fieldError(issue.keys[0]!, 'unknown field');
  throw new GatewayError('invalid_request', 'The body must be a JSON object.');
}
