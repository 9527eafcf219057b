/**
 * @module
 * Text for a terminal: tables, `key  value` lists, and values quoted in messages. Whatever a
 * value holds (a key name from the admin API, an argument), a control character is shown as an
 * escape (`\x1b`, `\n`), never sent raw, so no value can move the cursor, recolour the screen or
 * start a table row of its own.
 */

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' }

/**
 * `s` with its control characters (C0, DEL, C1) escaped.
 * @example printable('red\x1b[31m\n') // → 'red\\x1b[31m\\n'
 */
/** "3 console sessions ended" (what disabling, revoking or signing out ended). */
export const sessionsEnded = (n: number): string => `${n} console session${n === 1 ? '' : 's'} ended`

/** `; 3 console sessions ended` after what a change did, or nothing when it ended none. */
export const sessionsNote = (n: number | undefined): string => (n ? `; ${sessionsEnded(n)}` : '')

export function printable(s: string): string {
  return s.replace(/\p{Cc}/gu, (c) => NAMED[c] ?? `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`)
}

/** `'value'` for a message: printable, and cut to `max` characters. */
export function quoted(s: string, max = 80): string {
  const p = printable(s)
  return `'${p.length > max ? `${p.slice(0, max)}…' (${s.length} characters)` : `${p}'`}`
}

function cell(v: unknown): string {
  if (v === null || v === undefined) return '-'
  return printable(Array.isArray(v) ? v.join(',') : String(v))
}

/** Fixed-width text table. */
export function table(rows: Array<Record<string, unknown>>, columns: string[]): string {
  if (!rows.length) return '(none)'
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)))
  const line = (vals: string[]) =>
    vals
      .map((v, i) => v.padEnd(widths[i]!))
      .join('  ')
      .trimEnd()
  return [
    line(columns.map((c) => c.toUpperCase())),
    ...rows.map((r) => line(columns.map((c) => cell(r[c])))),
  ].join('\n')
}

/** One `key  value` line per field; an object value as JSON. */
export function fields(obj: Record<string, unknown>): string {
  const w = Math.max(...Object.keys(obj).map((k) => k.length))
  return Object.entries(obj)
    .map(([k, v]) => `${k.padEnd(w)}  ${typeof v === 'object' && v !== null ? JSON.stringify(v) : cell(v)}`)
    .join('\n')
}
