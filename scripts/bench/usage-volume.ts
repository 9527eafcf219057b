/**
 * @module
 * `GET /v1/usage` for an account with 2,000,000 requests in the last 24 h, on the running gateway.
 * The requests are written straight into the database (as the limiter and recorder would have: a
 * log row and an admission with its sequence number each, and the per-minute counters), then the
 * endpoint is timed over HTTP. For comparison, the same figures are computed the way the gateway
 * did before the counters, by scanning the account's log.
 */
import { Database } from 'bun:sqlite'
import type { Gateway } from './processes.ts'
import { type Series, series } from './report.ts'

export interface UsageVolumeResult {
  rows: number
  fillSeconds: number
  /** GET /v1/usage over HTTP, ms. */
  usageMs: Series
  /** The old way: summing the log (today, last 24 h, per model), ms. */
  logScanMs: Series
  /** Requests the endpoint reported in last_24h (must equal `rows`). */
  reported: number
}

const DAY = 86_400_000

export async function runUsageVolume(
  gw: Gateway,
  exe: string[],
  rows: number,
  samples: number,
): Promise<UsageVolumeResult> {
  const common = ['--db', gw.dbPath, '--json']
  const cfg = gw.command[gw.command.indexOf('--config') + 1]!
  await cli([...exe, 'accounts', 'create', 'heavy', '--plan', 'unlimited', '--config', cfg, ...common])
  const { key } = (await cli([...exe, 'keys', 'create', 'heavy', '--config', cfg, ...common])) as {
    key: string
  }

  const t0 = performance.now()
  const db = new Database(gw.dbPath)
  db.run('PRAGMA busy_timeout = 10000')
  const { id: accountId } = db
    .query<{ id: number }, [string]>('SELECT id FROM accounts WHERE name = ?')
    .get('heavy')!
  const keyId = db
    .query<{ id: string }, [number]>('SELECT id FROM api_keys WHERE account_id = ?')
    .get(accountId)!.id
  // Spread over the last 24 h minus a minute, so all of them are inside every window.
  const start = Date.now() - DAY + 120_000
  const step = (DAY - 240_000) / rows
  db.transaction(() => {
    db.query(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
       INSERT INTO requests (request_id, account_id, key_id, model, stream, created_at, seq, status,
                             prompt_tokens, completion_tokens, latency_ms)
       SELECT 'bench-' || i, ?2, ?3, CASE i % 3 WHEN 0 THEN 'mock/bench' ELSE 'mock50/bench' END, i % 2,
              CAST(?4 + i * ?5 AS INTEGER), i, CASE WHEN i % 50 = 0 THEN 502 ELSE 200 END, 12, 34, 5 FROM n`,
    ).run(rows, accountId, keyId, start, step)
    db.run('UPDATE requests SET gateway_id = request_id WHERE gateway_id IS NULL')
    // The limiter's own log (schema v6): one row per admission, numbered per account.
    db.query(
      'INSERT INTO admissions (account_id, created_at, seq) SELECT account_id, created_at, seq FROM requests WHERE account_id = ?',
    ).run(accountId)
    db.query(
      `INSERT INTO usage_minutes (account_id, minute, model, requests, prompt_tokens, completion_tokens, errors)
       SELECT account_id, created_at / 60000, model, COUNT(*), SUM(prompt_tokens), SUM(completion_tokens), SUM(status >= 400)
       FROM requests WHERE account_id = ? GROUP BY account_id, created_at / 60000, model`,
    ).run(accountId)
  })()
  const fillSeconds = (performance.now() - t0) / 1000

  const get = async () => {
    const s = performance.now()
    const res = await fetch(`${gw.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })
    const body = (await res.json()) as { usage?: { last_24h: { requests: number } } }
    if (!res.ok || !body.usage) throw new Error(`/v1/usage answered ${res.status}`)
    return { ms: performance.now() - s, reported: body.usage.last_24h.requests }
  }
  await get() // warm: page cache, prepared statements
  const usageMs: number[] = []
  let reported = 0
  // The endpoint allows a burst of 20 per key (then one a second).
  for (let i = 0; i < Math.min(samples, 19); i++) {
    const r = await get()
    usageMs.push(r.ms)
    reported = r.reported
  }

  const now = Date.now()
  const TOTALS = 'COUNT(*), SUM(prompt_tokens), SUM(completion_tokens), SUM(status >= 400)'
  const logScanMs: number[] = []
  for (let i = 0; i < 3; i++) {
    const s = performance.now()
    db.query(`SELECT ${TOTALS} FROM requests WHERE account_id = ? AND created_at >= ?`).get(
      accountId,
      now - DAY + 1,
    )
    db.query(`SELECT ${TOTALS} FROM requests WHERE account_id = ? AND created_at >= ?`).get(
      accountId,
      now - (now % DAY),
    )
    db.query(
      `SELECT model, ${TOTALS} FROM requests WHERE account_id = ? AND created_at >= ? GROUP BY model`,
    ).all(accountId, now - (now % DAY))
    logScanMs.push(performance.now() - s)
  }
  db.close()
  return { rows, fillSeconds, usageMs: series(usageMs), logScanMs: series(logScanMs), reported }
}

async function cli(cmd: string[]): Promise<unknown> {
  const p = Bun.spawn(cmd, { stdout: 'pipe', stderr: 'pipe', stdin: 'ignore' })
  const [out, err, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ])
  if (code !== 0) throw new Error(`${cmd.slice(2, 5).join(' ')} failed (${code}): ${err.trim()}`)
  return JSON.parse(out)
}
