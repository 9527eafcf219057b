import { describe, expect, test } from 'bun:test'
import { createLogger } from '../../src/util/log.ts'

describe('createLogger', () => {
  test('a line is time, level, msg, then the fields in order, as JSON', () => {
    const lines: string[] = []
    const log = createLogger('debug', (l) => lines.push(l))
    const fields = {
      request_id: 'req_1',
      status: 200,
      model: null,
      note: 'a "quoted"\nline',
      skipped: undefined,
    }
    log.info('access', fields)
    log.warn('no fields')
    log.error('empty', {})
    log.debug('clash', { msg: 'mine', level: 'x', n: 1 })
    expect(lines.every((l) => l.endsWith('\n'))).toBe(true)
    const parsed = lines.map((l) => JSON.parse(l))
    for (const p of parsed) expect(Number.isNaN(Date.parse(p.time))).toBe(false)
    const time = parsed[0].time
    expect(lines[0]).toBe(`${JSON.stringify({ time, level: 'info', msg: 'access', ...fields })}\n`)
    expect(parsed.slice(1).map(({ time: _, ...rest }) => rest)).toEqual([
      { level: 'warn', msg: 'no fields' },
      { level: 'error', msg: 'empty' },
      // A field named like a header key wins, as a spread would have it.
      { level: 'x', msg: 'mine', n: 1 },
    ])
  })

  test('lines under the level are not written', () => {
    const lines: string[] = []
    const log = createLogger('warn', (l) => lines.push(l))
    log.info('access', { a: 1 })
    log.debug('x')
    expect(lines).toEqual([])
  })
})
