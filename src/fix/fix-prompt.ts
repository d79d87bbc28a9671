import { countTextTokens } from '../tokens/text-token-count.ts';
import { PromptMeasure } from '../tokens/token-estimate.ts';
import type { ChatMessage, ChatRequest } from '../canonical/chat-request.ts';
import type { SourceFile } from './edits/source-file.ts';
import type { FixAgent } from './fix-agents.ts';
import type { FixInput } from './fix-input.ts';

/** Most output tokens a step may produce: room for edits to several files and an explanation. */
export const STEP_OUTPUT_TOKENS = 8_192;
/** Most tokens of feedback a later step carries about the previous one's problems. */
export const FEEDBACK_TOKENS = 1_000;

const EDIT_FORMAT = `Reply with a short explanation of the cause, then the edits. Write each edit as a search/replace block:

path/of/the/file.ext
\`\`\`
<<<<<<< SEARCH
the exact lines to change, copied from the file, with a few lines around them so they are found exactly once
=======
the new lines
>>>>>>> REPLACE
\`\`\`

Rules: copy the SEARCH lines exactly as they are in the file; never shorten code with "..." or comments like "rest unchanged"; use several small blocks rather than one large one; to create a new file, use an empty SEARCH section. A unified diff (\`\`\`diff with --- a/path and +++ b/path) is accepted too.`;

function fence(text: string): string {
  // A fence longer than any backtick run inside, so file contents cannot close it.
  const longest = Math.max(2, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  return '`'.repeat(longest + 1);
}

function fileBlock(file: SourceFile): string {
  const marks = fence(file.content);
  return `${file.path}\n${marks}\n${file.content}${file.content.endsWith('\n') || file.content === '' ? '' : '\n'}${marks}`;
}

function taskText(input: FixInput): string {
  const parts: string[] = [];
  if (input.instruction) parts.push(`Instruction: ${input.instruction}`);
  if (input.command) parts.push(`The command \`${input.command}\` failed.`);
  if (input.output) parts.push(`Its output:\n${fileBlock({ path: 'output', content: input.output }).slice('output\n'.length)}`);
  parts.push(`Files you may change:\n\n${input.files.map(fileBlock).join('\n\n')}`);
  if (input.tests.length) parts.push(`Test files (read-only: never edit them):\n\n${input.tests.map(fileBlock).join('\n\n')}`);
  return parts.join('\n\n');
}

function systemText(agent: FixAgent): string {
  return `${agent.task}\n\n${EDIT_FORMAT}`;
}

/** The first step: the task alone. */
export function firstStepRequest(agent: FixAgent, input: FixInput): ChatRequest {
  return stepRequest([
    { role: 'system', content: systemText(agent) },
    { role: 'user', content: [{ type: 'text', text: taskText(input) }] },
  ]);
}

const minimalCounts = new Map<string, Promise<number>>();

/** The fair count of what every first step of `agent` holds, whatever the input: its system prompt and a request's framing. */
export function minimalPromptTokens(agent: FixAgent): Promise<number> {
  let count = minimalCounts.get(agent.id);
  if (!count) {
    count = new PromptMeasure(stepRequest([{ role: 'system', content: systemText(agent) }])).fairCount({ maxImageTokens: 0 });
    minimalCounts.set(agent.id, count);
  }
  return count;
}

/**
 * A later step: the task, the previous reply and what was wrong with it. Only the last attempt
 * is kept, so every later step's prompt is bounded by the task plus one reply and the feedback.
 */
export async function retryStepRequest(agent: FixAgent, input: FixInput, previousReply: string, problems: string[]): Promise<ChatRequest> {
  const feedback =
    'None of your edits were applied, because:\n' +
    problems.map((problem) => `- ${problem}`).join('\n') +
    '\n\nReply again with corrected edits against the files exactly as given above.';
  return stepRequest([
    { role: 'system', content: systemText(agent) },
    { role: 'user', content: [{ type: 'text', text: taskText(input) }] },
    { role: 'assistant', content: previousReply },
    { role: 'user', content: [{ type: 'text', text: await truncateToTokens(feedback, FEEDBACK_TOKENS) }] },
  ]);
}

function stepRequest(messages: ChatMessage[]): ChatRequest {
  return { messages, maxOutputTokens: STEP_OUTPUT_TOKENS, temperature: 0, passThrough: { format: 'openai', fields: {} } };
}

/** `text`, cut (with a note) so that it counts at most `limit` tokens. */
export async function truncateToTokens(text: string, limit: number): Promise<string> {
  if ((await countTextTokens(text)) <= limit) return text;
  const note = '\n[... cut]';
  let length = text.length;
  while (length > 0) {
    length = Math.floor(length * 0.8);
    const cut = text.slice(0, length) + note;
    if ((await countTextTokens(cut)) <= limit) return cut;
  }
  return note.trim();
}
