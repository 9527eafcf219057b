/**
 * @module
 * Text from a request, short enough to quote in a message or a log line: a reply or an audit line
 * never grows with what was sent.
 */

/** `text` cut at `max` characters, an ellipsis marking the cut. */
export function clip(text: string, max = 100): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`
}
