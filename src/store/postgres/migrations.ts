/**
 * @module
 * PostgreSQL schema, versioned. `switchyard migrate` applies what is missing under an advisory
 * lock (replicas started together migrate once); `serve` and the other commands only check the
 * version and refuse a schema this build does not know. Never edit a shipped migration.
 *
 * Times are BIGINT epoch milliseconds, as in the SQLite store.
 */
import type { SQL } from 'bun'
import { ADMIT_DECIDE } from './admit-sql.ts'
import { GATEWAY_ID_V5 } from './migrations-v5.ts'
import { USAGE_MINUTES_V6 } from './migrations-v6.ts'
import { AUTH_GENERATION_V7 } from './migrations-v7.ts'
import { TOKENS_V10 } from './migrations-v10.ts'
import { ATTEMPTS_V11 } from './migrations-v11.ts'
import { RESERVE_V12 } from './migrations-v12.ts'
import { REFUSALS_V13 } from './migrations-v13.ts'
import { RETRY_LATER_V14 } from './migrations-v14.ts'
import { ITEM_STATE_V15 } from './migrations-v15.ts'
import { ALERTS_V16 } from './migrations-v16.ts'
import { EXTEND_V17 } from './migrations-v17.ts'
import { ESTIMATED_V18 } from './migrations-v18.ts'
import { CACHE_TOKENS_V19 } from './migrations-v19.ts'
import { CACHE_ROLLUPS_V20 } from './migrations-v20.ts'
import { EXTEND_V21 } from './migrations-v21.ts'

const V1 = `
CREATE TABLE accounts (
  id BIGSERIAL PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  plan TEXT NOT NULL,
  enabled BOOLEAN NOT NULL DEFAULT TRUE,
  plan_started_at BIGINT NOT NULL,
  plan_expires_at BIGINT,
  created_at BIGINT NOT NULL,
  -- Head of the account's admission log. The limiter locks this row, which serialises one
  -- account's admissions across every replica; other accounts never wait.
  admit_seq BIGINT NOT NULL DEFAULT 0,
  admit_at BIGINT NOT NULL DEFAULT 0
);
CREATE TABLE plan_history (
  id BIGSERIAL PRIMARY KEY,
  account_id BIGINT NOT NULL REFERENCES accounts(id),
  plan TEXT NOT NULL,
  started_at BIGINT NOT NULL,
  expires_at BIGINT,
  reason TEXT NOT NULL,
  created_at BIGINT NOT NULL
);
CREATE INDEX plan_history_account ON plan_history(account_id, id);
CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  account_id BIGINT NOT NULL REFERENCES accounts(id),
  name TEXT,
  prefix TEXT NOT NULL,
  hash TEXT NOT NULL UNIQUE,
  state TEXT NOT NULL CHECK (state IN ('enabled', 'disabled', 'revoked')),
  created_at BIGINT NOT NULL,
  rotated_at BIGINT,
  suspended_until BIGINT,
  rejections INTEGER NOT NULL DEFAULT 0,
  rejections_since BIGINT
);
CREATE INDEX api_keys_account ON api_keys(account_id);
-- One row per admitted request: the usage record, and (without Redis) the limiter's log.
-- seq numbers an account's admissions when the database is the limiter (NULL under Redis).
CREATE TABLE requests (
  id BIGSERIAL PRIMARY KEY,
  request_id TEXT NOT NULL,
  account_id BIGINT NOT NULL,
  key_id TEXT NOT NULL,
  model TEXT NOT NULL,
  stream BOOLEAN NOT NULL,
  created_at BIGINT NOT NULL,
  seq BIGINT,
  status INTEGER,
  prompt_tokens INTEGER,
  completion_tokens INTEGER,
  latency_ms INTEGER,
  ttft_ms INTEGER,
  error_code TEXT
);
CREATE INDEX requests_account_time ON requests(account_id, created_at, seq);
CREATE UNIQUE INDEX requests_account_seq ON requests(account_id, seq);
CREATE INDEX requests_key_time ON requests(key_id, created_at);
CREATE INDEX requests_time ON requests(created_at);

-- The admission, in one round trip and one transaction. Windows are exact sliding logs: the
-- number of requests in a window is admit_seq − (seq of the oldest row inside it) + 1.
-- p_now NULL = the database server's clock (one clock for every replica).
CREATE FUNCTION switchyard_admit(
  p_account BIGINT, p_key TEXT, p_model TEXT, p_request TEXT, p_stream BOOLEAN, p_now BIGINT,
  p_rpm INTEGER, p_rpd INTEGER, p_minute_ms BIGINT, p_day_ms BIGINT,
  p_susp_max INTEGER, p_susp_window_ms BIGINT, p_susp_ms BIGINT)
RETURNS TABLE (o_admitted BOOLEAN, o_usage_id BIGINT, o_window TEXT, o_retry_at BIGINT, o_at BIGINT,
  o_minute_used BIGINT, o_minute_first BIGINT, o_day_used BIGINT, o_day_first BIGINT,
  o_suspended_until BIGINT)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_now BIGINT := COALESCE(p_now, (extract(epoch FROM clock_timestamp()) * 1000)::BIGINT);
  v_seq BIGINT;
  v_last_at BIGINT;
  v_first_seq BIGINT;
  v_first_at BIGINT;
  v_limit INTEGER;
  v_span BIGINT;
  v_n INTEGER;
BEGIN
  -- Waits for any admission of this account in flight on another connection, and holds the
  -- lock until commit: a window cannot be counted by two admissions at once.
  SELECT a.admit_seq, a.admit_at INTO v_seq, v_last_at FROM accounts a WHERE a.id = p_account FOR UPDATE;
  IF NOT FOUND THEN RAISE EXCEPTION 'account % not found', p_account; END IF;
${ADMIT_DECIDE}  -- Times never go backwards within an account (clock steps, several replicas).
  o_at := GREATEST(v_now, v_last_at);
  v_seq := v_seq + 1;
  INSERT INTO requests (request_id, account_id, key_id, model, stream, created_at, seq)
    VALUES (p_request, p_account, p_key, p_model, p_stream, o_at, v_seq) RETURNING id INTO o_usage_id;
  UPDATE accounts a SET admit_seq = v_seq, admit_at = o_at WHERE a.id = p_account;
  o_admitted := TRUE;
  RETURN NEXT;
END
$fn$;
`

const ADMIT_V2 = `
-- The admission, in one round trip and one transaction. Windows are exact sliding logs: the
-- number of requests in a window is admit_seq − (seq of the oldest row inside it) + 1.
-- p_now NULL = the database server's clock (one clock for every replica).
CREATE OR REPLACE FUNCTION switchyard_admit(
  p_account BIGINT, p_key TEXT, p_model TEXT, p_request TEXT, p_stream BOOLEAN, p_now BIGINT,
  p_rpm INTEGER, p_rpd INTEGER, p_minute_ms BIGINT, p_day_ms BIGINT,
  p_susp_max INTEGER, p_susp_window_ms BIGINT, p_susp_ms BIGINT)
RETURNS TABLE (o_admitted BOOLEAN, o_usage_id BIGINT, o_window TEXT, o_retry_at BIGINT, o_at BIGINT,
  o_minute_used BIGINT, o_minute_first BIGINT, o_day_used BIGINT, o_day_first BIGINT,
  o_suspended_until BIGINT)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_now BIGINT;
  v_seq BIGINT;
  v_last_at BIGINT;
  v_first_seq BIGINT;
  v_first_at BIGINT;
  v_limit INTEGER;
  v_span BIGINT;
  v_n INTEGER;
BEGIN
  -- Waits for any admission of this account in flight on another connection, and holds the
  -- lock until commit: a window cannot be counted by two admissions at once.
  SELECT a.admit_seq, a.admit_at INTO v_seq, v_last_at FROM accounts a WHERE a.id = p_account FOR UPDATE;
  IF NOT FOUND THEN RAISE EXCEPTION 'account % not found', p_account; END IF;
  -- Read the clock once the lock is ours: time spent waiting for it must not make this
  -- decision older than the admission it waited for (retry-after would exceed the window).
  v_now := GREATEST(COALESCE(p_now, (extract(epoch FROM clock_timestamp()) * 1000)::BIGINT), v_last_at);
${ADMIT_DECIDE}  -- Times never go backwards within an account (v_now is at least admit_at).
  o_at := v_now;
  v_seq := v_seq + 1;
  INSERT INTO requests (request_id, account_id, key_id, model, stream, created_at, seq)
    VALUES (p_request, p_account, p_key, p_model, p_stream, o_at, v_seq) RETURNING id INTO o_usage_id;
  UPDATE accounts a SET admit_seq = v_seq, admit_at = o_at WHERE a.id = p_account;
  o_admitted := TRUE;
  RETURN NEXT;
END
$fn$;
`

const ADMIT_MANY_V4 = `
-- Group commit: the admissions one process asks for in the same event-loop turn, in one round
-- trip and one transaction (one commit, one WAL flush). Each runs in its own subtransaction, so
-- a failing one fails alone. Accounts are locked in ascending id order, so two batches (from two
-- replicas) never wait for each other in a cycle.
CREATE FUNCTION switchyard_admit_many(p_items JSONB, p_minute_ms BIGINT, p_day_ms BIGINT)
RETURNS TABLE (o_index INTEGER, o_error TEXT, o_admitted BOOLEAN, o_usage_id BIGINT, o_window TEXT,
  o_retry_at BIGINT, o_at BIGINT, o_minute_used BIGINT, o_minute_first BIGINT, o_day_used BIGINT,
  o_day_first BIGINT, o_suspended_until BIGINT)
LANGUAGE plpgsql AS $fn$
DECLARE
  it RECORD;
  r RECORD;
BEGIN
  FOR it IN
    SELECT * FROM jsonb_to_recordset(p_items) AS x(i INTEGER, account BIGINT, key TEXT, model TEXT,
      request TEXT, stream BOOLEAN, now BIGINT, rpm INTEGER, rpd INTEGER, susp_max INTEGER,
      susp_window_ms BIGINT, susp_ms BIGINT)
    ORDER BY x.account, x.i
  LOOP
    o_index := it.i;
    BEGIN
      SELECT * INTO r FROM switchyard_admit(it.account, it.key, it.model, it.request, it.stream, it.now,
        it.rpm, it.rpd, p_minute_ms, p_day_ms, it.susp_max, it.susp_window_ms, it.susp_ms);
      o_error := NULL;
      o_admitted := r.o_admitted; o_usage_id := r.o_usage_id; o_window := r.o_window;
      o_retry_at := r.o_retry_at; o_at := r.o_at; o_minute_used := r.o_minute_used;
      o_minute_first := r.o_minute_first; o_day_used := r.o_day_used; o_day_first := r.o_day_first;
      o_suspended_until := r.o_suspended_until;
    EXCEPTION WHEN OTHERS THEN
      o_error := SQLERRM;
      o_admitted := NULL; o_usage_id := NULL; o_window := NULL; o_retry_at := NULL; o_at := NULL;
      o_minute_used := NULL; o_minute_first := NULL; o_day_used := NULL; o_day_first := NULL;
      o_suspended_until := NULL;
    END;
    RETURN NEXT;
  END LOOP;
END
$fn$;
`

// The console: each request's surface, indexes so every request-log filter is an index range
// read newest first, hourly and daily usage rollups that outlive the raw log, console sessions.
const CONSOLE_V3 = `
ALTER TABLE requests ADD COLUMN surface TEXT NOT NULL DEFAULT 'chat';
CREATE INDEX requests_account_log ON requests(account_id, created_at, id);
CREATE INDEX requests_key_log ON requests(key_id, created_at, id);
CREATE INDEX requests_model_log ON requests(model, created_at, id);
CREATE INDEX requests_status_log ON requests(status, created_at, id);
CREATE INDEX requests_log ON requests(created_at, id);
CREATE TABLE usage_hourly (
  t BIGINT NOT NULL, account_id BIGINT NOT NULL, key_id TEXT NOT NULL, model TEXT NOT NULL, surface TEXT NOT NULL,
  requests BIGINT NOT NULL DEFAULT 0, prompt_tokens BIGINT NOT NULL DEFAULT 0,
  completion_tokens BIGINT NOT NULL DEFAULT 0, errors BIGINT NOT NULL DEFAULT 0,
  rate_limited BIGINT NOT NULL DEFAULT 0, latency_ms_sum BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (t, account_id, key_id, model, surface)
);
CREATE INDEX usage_hourly_account ON usage_hourly(account_id, t);
CREATE INDEX usage_hourly_key ON usage_hourly(key_id, t);
CREATE TABLE usage_daily (LIKE usage_hourly INCLUDING ALL);
CREATE INDEX usage_daily_account ON usage_daily(account_id, t);
CREATE INDEX usage_daily_key ON usage_daily(key_id, t);
INSERT INTO usage_hourly (t, account_id, key_id, model, surface, requests, prompt_tokens, completion_tokens, errors, latency_ms_sum)
  SELECT created_at - created_at % 3600000, account_id, key_id, model, surface, COUNT(*),
    COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(completion_tokens), 0), COUNT(*) FILTER (WHERE status >= 400),
    COALESCE(SUM(latency_ms), 0)
  FROM requests WHERE status IS NOT NULL GROUP BY 1, 2, 3, 4, 5;
INSERT INTO usage_daily (t, account_id, key_id, model, surface, requests, prompt_tokens, completion_tokens, errors, latency_ms_sum)
  SELECT t - t % 86400000, account_id, key_id, model, surface, SUM(requests), SUM(prompt_tokens),
    SUM(completion_tokens), SUM(errors), SUM(latency_ms_sum)
  FROM usage_hourly GROUP BY 1, 2, 3, 4, 5;
CREATE TABLE console_sessions (
  hash TEXT PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('admin', 'key')),
  key_id TEXT,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL
);
`

export const MIGRATIONS: Array<{ version: number; sql: string }> = [
  { version: 1, sql: V1 },
  // v2: the admission reads the clock after taking the account's lock, not before waiting for it.
  { version: 2, sql: ADMIT_V2 },
  { version: 3, sql: CONSOLE_V3 },
  // v4: admissions group-committed (one transaction per event-loop turn), as on SQLite.
  { version: 4, sql: ADMIT_MANY_V4 },
  // v5: usage rows keyed by the gateway's request id (migrations-v5.ts).
  { version: 5, sql: GATEWAY_ID_V5 },
  // v6: per-minute usage counters for /v1/usage (migrations-v6.ts).
  { version: 6, sql: USAGE_MINUTES_V6 },
  // v7: the authentication cache's generation counter (migrations-v7.ts).
  { version: 7, sql: AUTH_GENERATION_V7 },
  // v8: two indexes every admission paid for that the console's log indexes (v3) already cover:
  // (key_id, created_at) and (created_at) are prefixes of requests_key_log and requests_log, so
  // every query that could read them (log pages, retention, a key's last use) reads those.
  // Measured: PostgreSQL server CPU per admission (16 together) 239 → 222 µs.
  { version: 8, sql: 'DROP INDEX IF EXISTS requests_key_time;\nDROP INDEX IF EXISTS requests_time;' },
  // v9: console sessions bound to the credential they were opened with (as SQLite's v8); a
  // session without a binding (opened before this) is refused.
  { version: 9, sql: 'ALTER TABLE console_sessions ADD COLUMN binding TEXT;' },
  // v10: tokens and money — per-key limits, cost, reservations and their settlement (migrations-v10.ts).
  { version: 10, sql: TOKENS_V10 },
  // Upstream attempts and the answering model in the request log (migrations-v11.ts).
  { version: 11, sql: ATTEMPTS_V11 },
  // v12: reserve and settle — charge rows checked and charged in the admission (migrations-v12.ts).
  { version: 12, sql: RESERVE_V12 },
  // v13: refusals before admission per key, code and hour (migrations-v13.ts, refusals.ts), as on SQLite.
  { version: 13, sql: REFUSALS_V13 },
  // v14: with both request windows full, the later retry time (migrations-v14.ts).
  { version: 14, sql: RETRY_LATER_V14 },
  // v15: an admission failing inside a group commit keeps its SQLSTATE (migrations-v15.ts): a
  // deadlock or serialization failure is 503 store_busy, not a 500.
  { version: 15, sql: ITEM_STATE_V15 },
  // v16: the alert deliveries queue and the once-per-period marks (migrations-v16.ts), as SQLite's v15.
  { version: 16, sql: ALERTS_V16 },
  // v17: a live reservation grows as the answer arrives (migrations-v17.ts).
  { version: 17, sql: EXTEND_V17 },
  // v18: settled estimates flagged in the request log and counted per minute (migrations-v18.ts), as SQLite's v16.
  { version: 18, sql: ESTIMATED_V18 },
  // v19: prompt-cache reads and writes counted per minute (migrations-v19.ts), as SQLite's v17.
  { version: 19, sql: CACHE_TOKENS_V19 },
  // v20: prompt-cache reads and writes per key in the hourly and daily rollups (migrations-v20.ts), as SQLite's v18.
  { version: 20, sql: CACHE_ROLLUPS_V20 },
  // v21: growth past a budget period's edge checked against the admission's period (migrations-v21.ts).
  { version: 21, sql: EXTEND_V21 },
]

export const PG_LATEST_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version

/** Arbitrary constant naming Switchyard's migration lock (pg_advisory_xact_lock takes a bigint). */
const MIGRATION_LOCK = 0x5357_4d49

export async function currentVersion(sql: SQL): Promise<number | null> {
  const [t] = await sql`SELECT to_regclass('schema_migrations') IS NOT NULL AS present`
  if (!t.present) return null
  const [row] = await sql`SELECT MAX(version) AS v FROM schema_migrations`
  return row.v === null ? null : Number(row.v)
}

/** Applies every missing migration up to `target` (tests stop early to seed an old schema); returns the versions applied. */
export async function migratePostgres(sql: SQL, now: number, target = PG_LATEST_VERSION): Promise<number[]> {
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`
    await tx`CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)`
    const [row] = await tx`SELECT MAX(version) AS v FROM schema_migrations`
    const current = row.v === null ? 0 : Number(row.v)
    if (current > PG_LATEST_VERSION) throw newerSchema(current)
    const applied: number[] = []
    for (const m of MIGRATIONS) {
      if (m.version <= current || m.version > target) continue
      // Migration text is a constant of this file (DDL takes no parameters).
      await tx.unsafe(m.sql)
      await tx`INSERT INTO schema_migrations (version, applied_at) VALUES (${m.version}, ${now})`
      applied.push(m.version)
    }
    return applied
  })
}

/** `serve` and the CLI run only on the schema this build was written for. */
export async function assertSchema(sql: SQL, where: string): Promise<void> {
  const v = await currentVersion(sql)
  if (v === null)
    throw new Error(`${where} has no Switchyard schema; run \`switchyard migrate\` with this config first`)
  if (v > PG_LATEST_VERSION) throw newerSchema(v)
  if (v < PG_LATEST_VERSION)
    throw new Error(
      `${where} is at schema version ${v}; this build needs ${PG_LATEST_VERSION}: run \`switchyard migrate\``,
    )
}

function newerSchema(v: number): Error {
  return new Error(
    `database schema version ${v} is newer than this build supports (${PG_LATEST_VERSION}); upgrade switchyard`,
  )
}
