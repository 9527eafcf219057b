/**
 * The last usage flush of a graceful stop (SIGTERM) meets a busy store: another process holds
 * SQLite's write lock past `database.busy_timeout_ms`. It ran once: what it put back was lost when
 * the store closed — the log rows and settlements of requests that had been served (the sweeper
 * later settles each to its whole reservation, overcharging the account) and the refusal counts.
 * Now it is retried until written, for up to `server.drain_timeout_s` after the drain; what is
 * still pending past that is named in an `error` line. A real `serve` (alone and with
 * `--workers 2`), a real lock held by another process, a real signal.
 */
import { Database } from 'bun:sqlite'
import { afterAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { adminPost } from '../../support/admin-api.ts'
import { tempDir, testConfigDoc } from '../../support/config-doc.ts'
import { holdWriteLock } from '../../support/lock.ts'
import { type ServeProcess, spawnServe, UNSUPERVISED, writeConfig } from '../../support/process.ts'

const running: ServeProcess[] = []
// Once, after the file: two of its tests run at once, and a clean-up after each would kill the
// other's server while it still drains.
afterAll(async () => {
  for (const p of running.splice(0)) await p.kill('SIGKILL')
})

/** One write waits this long for the lock, then the flush puts its batch back. */
const BUSY_MS = 400
const SERVED = 6
const INVALID = 3

async function setup(drainS: number, extra: string[]) {
  const dir = tempDir()
  const db = join(dir, 'sy.db')
  const doc = testConfigDoc({
    server: { host: '127.0.0.1', port: 0, drain_timeout_s: drainS },
    database: { busy_timeout_ms: BUSY_MS },
    // Longer than the test: only the shutdown flush writes outcomes, settlements and refusals.
    usage: { flush_ms: 600_000 },
    plans: { metered: { rpm: null, rpd: null, tpm: 1_000_000, models: ['*'] } },
    default_plan: 'metered',
  })
  const base = ['--config', writeConfig(dir, doc), '--db', db]
  // With its fetch cap set `serve` serves in the process spawned, where it would run itself again
  // under a supervisor that forwards the signal (src/cli/process.ts; signals.test.ts tests that):
  // one Bun process started, not two one after the other. The signal then reaches the serving
  // process directly, and its exit status is this process's.
  const serve = await spawnServe(['--port', '0', ...extra, ...base], {
    env: UNSUPERVISED,
  })
  running.push(serve)
  // The account and its key through the admin API (a CLI process apiece costs seconds on a loaded machine).
  const admin = (path: string, body: unknown) => adminPost(serve.url, path, body)
  await admin('/accounts', { name: 'acct' })
  const { key } = await admin('/keys', { account: 'acct' })
  const post = (body: unknown) =>
    fetch(`${serve.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
  for (let i = 0; i < SERVED; i++) {
    const r = await post({ model: 'demo/echo', messages: [{ role: 'user', content: `hi ${i}` }] })
    expect(r.status).toBe(200)
    await r.text()
  }
  for (let i = 0; i < INVALID; i++) {
    const r = await post({ model: 'demo/echo', messages: 'not a list' })
    expect(r.status).toBe(400)
    await r.text()
  }
  return { serve, db }
}

/** Reads the serve's stderr until a JSON line that `match` takes (the rest keeps draining). */
async function stderrLine(serve: ServeProcess, match: (line: Record<string, unknown>) => boolean) {
  const reader = (serve.proc.stderr as ReadableStream<Uint8Array>).getReader()
  const decoder = new TextDecoder()
  let text = ''
  for (;;) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`serve's stderr ended without the line: ${text}`)
    text += decoder.decode(value, { stream: true })
    const found = text
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => {
        try {
          return JSON.parse(l) as Record<string, unknown>
        } catch {
          return {} // a line not yet whole
        }
      })
      .find(match)
    if (found) {
      void (async () => {
        while (!(await reader.read()).done) {}
      })()
      return found
    }
  }
}

function books(db: string) {
  const d = new Database(db, { readonly: true })
  try {
    const served = d
      .query(
        'SELECT COUNT(*) AS n, SUM(prompt_tokens + completion_tokens) AS tokens FROM requests WHERE status = 200',
      )
      .get() as { n: number; tokens: number | null }
    const charges = d
      .query(
        'SELECT COUNT(*) AS n, SUM(settled) AS settled, SUM(tokens) AS tokens FROM admissions WHERE tokens IS NOT NULL',
      )
      .get() as { n: number; settled: number; tokens: number }
    const refused = d.query('SELECT COALESCE(SUM(count), 0) AS n FROM refusals_hourly').get() as { n: number }
    return { served, charges, refused: refused.n }
  } finally {
    d.close()
  }
}

describe.each([[[]], [['--workers', '2']]])(
  'SIGTERM while another process holds the write lock (serve %p)',
  (extra) => {
    // Alone and with --workers 2 at once: each its own server, file and lock, and its time mostly
    // the lock's wait and the process starts.
    test.concurrent('the last flush waits out the lock: every outcome, settlement and refusal count is written, exit 0', async () => {
      const { serve, db } = await setup(10, extra as string[])
      // Held until the last flush has failed on it once (the serve says so), then let go well
      // inside the window; 8 s is only the bound should that line never come.
      const lock = await holdWriteLock(db, 8_000)
      serve.proc.kill('SIGTERM')
      const failed = await stderrLine(serve, (l) => l.msg === 'usage flush failed')
      expect(failed).toMatchObject({ level: 'error', retrying: true })
      await lock.release()
      expect(await serve.proc.exited).toBe(0)
      const b = books(db)
      expect(b.served.n).toBe(SERVED)
      // Every reservation settled to what its request used, none left for the sweeper.
      expect(b.charges).toEqual({ n: SERVED, settled: SERVED, tokens: b.served.tokens! })
      expect(b.refused).toBe(INVALID)
    }, 40_000)
  },
)

test('past the window the loss is named in an error line, and serve still exits 0', async () => {
  const { serve, db } = await setup(1, [])
  const lock = await holdWriteLock(db, 6_000)
  const t0 = performance.now()
  serve.proc.kill('SIGTERM')
  expect(await serve.proc.exited).toBe(0)
  // The drain (nothing in flight), its 1 s grace, the 1 s window, and one attempt under way then.
  expect(performance.now() - t0).toBeLessThan(5_000)
  const lines = (await new Response(serve.proc.stderr as ReadableStream).text())
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l))
  const lost = lines.find((l) => l.msg === 'usage lost at shutdown')
  expect(lost).toMatchObject({ level: 'error', outcomes: SERVED, settlements: SERVED, refusals: INVALID })
  // The serve is gone: nothing is left to wait out the 6 s for.
  await lock.release()
  expect(books(db).served.n).toBe(0)
}, 40_000)
