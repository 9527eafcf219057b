import { describe, expect, test } from 'bun:test'
import { batchedWriter, createLogger } from '../../src/util/log.ts'

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

describe('batchedWriter', () => {
  test("one turn's lines leave together, in order, at the end of the turn", async () => {
    const writes: string[] = []
    const log = createLogger(
      'info',
      batchedWriter((t) => writes.push(t)),
    )
    log.info('a')
    log.info('b')
    expect(writes).toEqual([])
    await new Promise((r) => setImmediate(r))
    expect(writes.length).toBe(1)
    expect(writes[0]!.split('\n').map((l) => (l ? JSON.parse(l).msg : ''))).toEqual(['a', 'b', ''])
    log.info('c')
    await new Promise((r) => setImmediate(r))
    expect(writes.length).toBe(2)
  })

  test('64 KB waiting are written at once, without waiting for the turn to end', () => {
    const writes: string[] = []
    const log = createLogger(
      'info',
      batchedWriter((t) => writes.push(t)),
    )
    const big = 'x'.repeat(1024)
    for (let i = 0; i < 70; i++) log.info('line', { big })
    expect(writes.length).toBe(1)
    expect(writes[0]!.length).toBeGreaterThanOrEqual(64 * 1024)
  })

  test('a process that exits writes what was waiting (exit from inside the turn)', async () => {
    const child = Bun.spawn(
      [
        process.execPath,
        '-e',
        `import { createLogger } from ${JSON.stringify(`${import.meta.dir}/../../src/util/log.ts`)}
         const log = createLogger('info'); log.info('before exit', { n: 1 }); process.exit(3)`,
      ],
      { stderr: 'pipe', stdout: 'ignore' },
    )
    const err = await new Response(child.stderr).text()
    expect(await child.exited).toBe(3)
    expect(JSON.parse(err.trim()).msg).toBe('before exit')
  })
})

// A key pasted where its id belongs (`keys revoke sk-sy-…`, `/admin/v1/keys/sk-sy-…/revoke`) went
// whole into the access line's path and the audit line's target: no line may hold a key.
describe('no line holds a key', () => {
  test('a key anywhere in a line is cut to its display prefix; a display prefix alone is kept', () => {
    const lines: string[] = []
    const log = createLogger('debug', (l) => lines.push(l))
    const key = `sk-sy-${'Ab3'.repeat(13)}x`
    log.info('access', { path: `/admin/v1/keys/${key}/revoke`, key_prefix: 'sk-sy-Ab3Ab3' })
    log.warn('audit', { target: key, msg: `k ${key} k` })
    expect(lines.join('')).not.toContain(key)
    expect(JSON.parse(lines[0]!)).toMatchObject({
      path: '/admin/v1/keys/sk-sy-Ab3Ab3…/revoke',
      key_prefix: 'sk-sy-Ab3Ab3',
    })
    expect(JSON.parse(lines[1]!)).toMatchObject({ target: 'sk-sy-Ab3Ab3…', msg: 'k sk-sy-Ab3Ab3… k' })
  })
})
