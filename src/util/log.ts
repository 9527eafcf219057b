/**
 * @module
 * JSON-lines logger on stderr. Callers pass structured fields and never an API key (auth logs the
 * key's display prefix at most); a key someone pasted into a path or an id is cut to its display
 * prefix here, the one place every line passes.
 */
import { maskKeys } from './key-shape.ts'

export type Level = 'debug' | 'info' | 'warn' | 'error'
const RANK: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 }

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void
  info(msg: string, fields?: Record<string, unknown>): void
  warn(msg: string, fields?: Record<string, unknown>): void
  error(msg: string, fields?: Record<string, unknown>): void
}

/**
 * The longest request path a line repeats (the access line's `path`, an audit line's): every route
 * of the gateway fits in well under it, and a client that sends a 16 KB path cannot make each of
 * its lines 16 KB. Paths reach here percent-encoded, so characters are bytes.
 */
export const PATH_SHOWN = 256

/** Past this many buffered bytes the lines are written at once, not at the end of the tick. */
const BATCH_BYTES = 64 * 1024

/**
 * A writer to stderr that gathers the lines of one event-loop turn and writes them with one
 * call when the turn ends (or once 64 KB are waiting). Under load the access log is one line a
 * request; one `write` each was about 1.5 % of the gateway's CPU (issue 24's profile). The lines
 * still leave in order, at the end of the turn they were made in; on exit (`process.exit`
 * included) what is waiting is written first, so only a `kill -9` can take the last turn's lines.
 */
export function batchedWriter(
  write: (text: string) => void = (t) => process.stderr.write(t),
): (line: string) => void {
  let pending = ''
  let scheduled = false
  const flush = () => {
    scheduled = false
    if (!pending) return
    const out = pending
    pending = ''
    write(out)
  }
  process.once('exit', flush)
  return (line) => {
    pending += line
    if (pending.length >= BATCH_BYTES) flush()
    else if (!scheduled) {
      scheduled = true
      setImmediate(flush)
    }
  }
}

let stderrWriter: ((line: string) => void) | null = null
/** Every logger of the process shares one batch, so lines keep their order across loggers. */
function stderrLines(): (line: string) => void {
  stderrWriter ??= batchedWriter()
  return stderrWriter
}

export function createLogger(level: Level, writeLine: (line: string) => void = stderrLines()): Logger {
  const min = RANK[level]
  const write = (line: string) => writeLine(maskKeys(line))
  const emit = (lvl: Level, msg: string, fields?: Record<string, unknown>) => {
    if (RANK[lvl] < min) return
    const time = new Date().toISOString()
    if (fields && ('time' in fields || 'level' in fields || 'msg' in fields)) {
      write(`${JSON.stringify({ time, level: lvl, msg, ...fields })}\n`)
      return
    }
    // The same line as stringifying `{ time, level, msg, ...fields }`, without copying the
    // fields into a new object first (this runs once per request for the access log).
    const rest = fields ? JSON.stringify(fields) : '{}'
    const head = `{"time":"${time}","level":"${lvl}","msg":${JSON.stringify(msg)}`
    write(rest === '{}' ? `${head}}\n` : `${head},${rest.slice(1)}\n`)
  }
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
  }
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} }
