/**
 * @module
 * The words of a compaction the gateway makes (compaction.ts): the prompt that asks the target
 * model for the summary, the header the summary begins with in the compacted conversation, and
 * the summary as a `compaction` item's `encrypted_content` — not encrypted: marked as the
 * gateway's, so a later turn reads it back (`readSummary`). Imports nothing: the decoders read it.
 *
 * @example
 * readSummary(summaryContent('The task is …')) // 'The task is …'
 */

/** Marks a `compaction` item's `encrypted_content` as a summary the gateway wrote (base64 after it). */
const SUMMARY_CONTENT = 'switchyard.summary.v1:'

/** A summary as a `compaction` item's `encrypted_content`. */
export const summaryContent = (summary: string): string =>
  `${SUMMARY_CONTENT}${Buffer.from(summary, 'utf8').toString('base64')}`

/** The summary a `compaction` item's `encrypted_content` holds, or null when the gateway did not write it. */
export function readSummary(content: unknown): string | null {
  if (typeof content !== 'string' || !content.startsWith(SUMMARY_CONTENT)) return null
  return Buffer.from(content.slice(SUMMARY_CONTENT.length), 'base64').toString('utf8')
}

/** The instruction that ends the summary request. */
export const SUMMARY_PROMPT =
  'Write a handoff summary of this conversation for the assistant that will continue it with only ' +
  "your summary and the user's messages: the task and its goal, what has been done (files, " +
  'commands, their results), the decisions and constraints, what remains and the next step. Be ' +
  'concise and concrete. Write only the summary.'

/** How the summary begins in the compacted conversation: the model that reads it knows what it is. */
export const SUMMARY_HEADER = 'Summary of the earlier conversation (compacted by Switchyard):\n\n'
