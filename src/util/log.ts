/**
 * @module
 * JSON-lines logger on stderr. Callers pass structured fields; nothing here ever receives an
 * API key (auth logs the key's display prefix at most).
 */

export type Level = 'debug' | 'info' | 'warn' | 'error'
const RANK: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 }

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void
  info(msg: string, fields?: Record<string, unknown>): void
  warn(msg: string, fields?: Record<string, unknown>): void
  error(msg: string, fields?: Record<string, unknown>): void
}

export function createLogger(
  level: Level,
  write: (line: string) => void = (l) => process.stderr.write(l),
): Logger {
  const min = RANK[level]
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
