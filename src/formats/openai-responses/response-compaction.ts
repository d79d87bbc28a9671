/**
 * Codex's remote compaction, answered by any model: when its context fills, Codex on its
 * built-in provider sends the conversation with a `compaction_trigger` item last and expects
 * exactly one `compaction` output item, which it keeps in place of the earlier turns and sends
 * back in later inputs. OpenAI's is encrypted, readable only by OpenAI; the gateway's holds a
 * summary the answering model wrote, readable by the gateway on any later turn and any model.
 */

/** What the model is asked in place of the trigger. */
export const COMPACTION_REQUEST = [
  'The conversation above is about to be cut to save context. Write the handoff note that will replace it,',
  'for whoever continues the work without seeing it: what the user asked for and still expects, what was',
  'done and found (files, commands and their results, decisions and why), what is left to do next, and',
  'any detail needed to go on (names, paths, errors). Be complete but brief. Reply with the note only.',
].join(' ');

/** Put before the note when it is read back, so the model knows what it is. */
const SUMMARY_INTRO = 'Earlier turns of this conversation were compacted into this note:\n\n';

/** Marks the gateway's own compaction content, told apart from OpenAI's encrypted one. */
const PREFIX = 'svc-compaction-v1:';

export function compactionItem(id: string, summary: string) {
  return { id, type: 'compaction', encrypted_content: PREFIX + Buffer.from(summary, 'utf8').toString('base64') };
}

/** The note a gateway-made compaction holds, as the text the model reads; null for anyone else's. */
export function compactionNote(encryptedContent: string): string | null {
  if (!encryptedContent.startsWith(PREFIX)) return null;
  return SUMMARY_INTRO + Buffer.from(encryptedContent.slice(PREFIX.length), 'base64').toString('utf8');
}
