/**
 * @module
 * Fills a store's request log with `n` synthetic rows (deterministic): accounts with skewed
 * traffic, several keys each, models, surfaces and statuses in realistic proportions, spread
 * evenly over `spanMs` before `end`. Used by the request-log benchmark and its correctness test.
 */
import type { Database } from 'bun:sqlite'

export const SEED_MODELS = [
  'demo/echo',
  'demo/fast',
  'openai/gpt-4o-mini',
  'openai/gpt-4o',
  'anthropic/claude',
  'gemini/flash',
]
export const SEED_SURFACES = ['chat', 'messages', 'responses']

/** Small deterministic PRNG (mulberry32), so every run seeds the same log. */
export function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const pickStatus = (r: number): number | null =>
  r < 0.9 ? 200 : r < 0.95 ? 400 : r < 0.97 ? 499 : r < 0.985 ? 502 : r < 0.995 ? 500 : r < 0.998 ? 504 : null

export function seedRequestLog(db: Database, n: number, end: number, spanMs: number, accounts = 50): void {
  const rand = prng(42)
  const now = end - spanMs
  db.transaction(() => {
    const acct = db.query<null, [string, number]>(
      "INSERT OR IGNORE INTO accounts (name, plan, enabled, plan_started_at, created_at) VALUES (?1, 'free', 1, ?2, ?2)",
    )
    for (let a = 1; a <= accounts; a++) acct.run(`seed-${a}`, now)
    const ids = db
      .query<{ id: number }, []>("SELECT id FROM accounts WHERE name LIKE 'seed-%' ORDER BY id")
      .all()
    const seqs = new Map<number, number>()
    const insert = db.query<
      null,
      [
        string,
        number,
        string,
        string,
        string,
        number,
        number,
        number,
        number | null,
        number | null,
        number | null,
        number | null,
        string | null,
      ]
    >(
      `INSERT INTO requests (request_id, account_id, key_id, model, surface, stream, created_at, seq, status,
         prompt_tokens, completion_tokens, latency_ms, error_code) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    for (let i = 0; i < n; i++) {
      // Traffic is skewed: a few accounts send most requests.
      const a = ids[Math.min(ids.length - 1, Math.floor(ids.length * rand() ** 3))]!.id
      const seq = (seqs.get(a) ?? 0) + 1
      seqs.set(a, seq)
      const status = pickStatus(rand())
      const model = SEED_MODELS[Math.floor(SEED_MODELS.length * rand() ** 2)]!
      insert.run(
        `req_seed_${i}`,
        a,
        `key_${a}_${Math.floor(rand() * 3)}`,
        model,
        SEED_SURFACES[Math.floor(rand() * SEED_SURFACES.length)]!,
        rand() < 0.5 ? 1 : 0,
        now + Math.floor((i * spanMs) / n),
        seq,
        status,
        status === null ? null : Math.floor(rand() * 2000),
        status === 200 ? Math.floor(rand() * 800) : null,
        status === null ? null : Math.floor(rand() * 3000),
        status !== null && status >= 400 ? `code_${status}` : null,
      )
    }
  }).immediate()
}
