/**
 * @module
 * The "bare prototype" of the hot path, run beside the gateway as a reference: Bun.serve,
 * the key's SHA-256 looked up in SQLite, one UPSERT counter per request (WAL, synchronous=NORMAL,
 * as the gateway), `fetch` to the mock, the answer's body passed on as a pure pipe. No routing,
 * validation, limits, usage, model rewrite, timeouts or error shapes: what every feature of the
 * gateway costs is the difference between the two in the same run.
 *
 * `bun scripts/bench/bare-proxy.ts <upstream base> <database file>` prints `{"port", "pid", "key"}`.
 * With `BARE_ELYSIA=1` the same handler runs as an Elysia route (the gateway's framework, its
 * app's two options, an onRequest and an onAfterResponse hook), served by `Bun.serve` through
 * `app.fetch` as the gateway's is: the ladder's (c1-ladder.ts) first rung above the bare one.
 */
import { Database } from 'bun:sqlite'
import { Elysia } from 'elysia'

const [upstream, dbPath] = Bun.argv.slice(2)
if (!upstream || !dbPath) {
  console.error('usage: bun scripts/bench/bare-proxy.ts <upstream base> <database file>')
  process.exit(2)
}
const KEY = 'sk-bare-bench-key'
const sha = (text: string) => new Bun.CryptoHasher('sha256').update(text).digest('hex')

const db = new Database(dbPath)
db.exec('PRAGMA journal_mode = WAL')
db.exec('PRAGMA synchronous = NORMAL')
db.exec('CREATE TABLE IF NOT EXISTS keys (hash TEXT PRIMARY KEY, account INTEGER NOT NULL)')
db.exec(
  'CREATE TABLE IF NOT EXISTS counters (account INTEGER NOT NULL, minute INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (account, minute))',
)
db.query('INSERT OR IGNORE INTO keys (hash, account) VALUES (?, 1)').run(sha(KEY))
const findKey = db.query<{ account: number }, [string]>('SELECT account FROM keys WHERE hash = ?')
const count = db.query<unknown, [number, number]>(
  'INSERT INTO counters (account, minute, n) VALUES (?, ?, 1) ON CONFLICT (account, minute) DO UPDATE SET n = n + 1',
)
const url = `${upstream}/chat/completions`

async function handle(req: Request): Promise<Response> {
  const found = findKey.get(sha((req.headers.get('authorization') ?? '').slice(7)))
  if (!found) return new Response('{"error":"unauthorized"}', { status: 401 })
  count.run(found.account, Math.floor(Date.now() / 60_000))
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: await req.text(),
    signal: req.signal,
  })
  return new Response(res.body, {
    status: res.status,
    headers: { 'content-type': res.headers.get('content-type') ?? 'application/json' },
  })
}

let fetchFn: (req: Request) => Response | Promise<Response> = handle
if (process.env.BARE_ELYSIA === '1') {
  const app = new Elysia({ handler: { standardHostname: false }, normalize: false })
    .onRequest(({ set }) => {
      set.headers['x-request-id'] = crypto.randomUUID()
    })
    .onAfterResponse(() => {})
    .post('/v1/chat/completions', ({ request }) => handle(request), { parse: 'none' })
  fetchFn = (req) => app.fetch(req)
}

const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (req) => fetchFn(req) })
console.log(JSON.stringify({ port: server.port, pid: process.pid, key: KEY }))
// An exit of its own on SIGTERM, so a `--cpu-prof` run writes its profile (plain-prof.ts).
process.on('SIGTERM', () => {
  server.stop(true)
  process.exit(0)
})
