/**
 * @module
 * Server-sent event framing for what the gateway writes.
 */

const LINE_BREAK = /\r\n|\r|\n/

/**
 * Frames one event: `event: <name>\n` (if given), one `data:` line per line of `data`, and the
 * blank line that ends the event. A line break inside `event` would let the caller inject fields
 * or whole events, so it is refused (as Hono's SSE writer does).
 *
 * @example
 * encodeSSE('{"a":1}')          // 'data: {"a":1}\n\n'
 * encodeSSE('a\nb', 'message')  // 'event: message\ndata: a\ndata: b\n\n'
 */
export function encodeSSE(data: string, event?: string): string {
  let head = ''
  if (event !== undefined) {
    if (LINE_BREAK.test(event)) throw new TypeError('SSE event name must not contain CR or LF')
    head = `event: ${event}\n`
  }
  // JSON payloads never contain raw line breaks: the common case is one concatenation.
  if (!LINE_BREAK.test(data)) return `${head}data: ${data}\n\n`
  return `${head}data: ${data.split(LINE_BREAK).join('\ndata: ')}\n\n`
}
