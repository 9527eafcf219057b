/**
 * @module
 * Versioned schema migrations, applied in order at start inside one transaction each.
 * Never edit a shipped migration; add the next version.
 */
import type { Database } from 'bun:sqlite'
import { TOKENS_V9 } from './migrations-v9.ts'
import { ATTEMPTS_V10 } from './migrations-v10.ts'
import { REFUSALS_V11 } from './migrations-v11.ts'
import { SCOPES_V12 } from './migrations-v12.ts'
import { SWEEP_V13 } from './migrations-v13.ts'
import { ADMISSION_CHARGES_V14 } from './migrations-v14.ts'
import { ALERTS_V15 } from './migrations-v15.ts'
import { ESTIMATED_V16 } from './migrations-v16.ts'
import { CACHE_TOKENS_V17 } from './migrations-v17.ts'
import { CACHE_ROLLUPS_V18 } from './migrations-v18.ts'

const MIGRATIONS: Array<{ version: number; sql: string }> = [
  {
    version: 1,
    sql: `
      CREATE TABLE accounts (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        plan TEXT NOT NULL,
        enabled INTEGER NOT NULL DEFAULT 1,
        plan_started_at INTEGER NOT NULL,
        plan_expires_at INTEGER,
        created_at INTEGER NOT NULL
      );
      CREATE TABLE plan_history (
        id INTEGER PRIMARY KEY,
        account_id INTEGER NOT NULL REFERENCES accounts(id),
        plan TEXT NOT NULL,
        started_at INTEGER NOT NULL,
        expires_at INTEGER,
        reason TEXT NOT NULL,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX plan_history_account ON plan_history(account_id, id);
      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        account_id INTEGER NOT NULL REFERENCES accounts(id),
        name TEXT,
        prefix TEXT NOT NULL,
        hash TEXT NOT NULL UNIQUE,
        state TEXT NOT NULL CHECK (state IN ('enabled', 'disabled', 'revoked')),
        created_at INTEGER NOT NULL,
        rotated_at INTEGER,
        suspended_until INTEGER
      );
      CREATE INDEX api_keys_account ON api_keys(account_id);
      -- One row per admitted request: the rate limiter's log and the usage record at once.
      CREATE TABLE requests (
        id INTEGER PRIMARY KEY,
        request_id TEXT NOT NULL,
        account_id INTEGER NOT NULL,
        key_id TEXT NOT NULL,
        model TEXT NOT NULL,
        stream INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        status INTEGER,
        prompt_tokens INTEGER,
        completion_tokens INTEGER,
        latency_ms INTEGER,
        ttft_ms INTEGER,
        error_code TEXT
      );
      CREATE INDEX requests_account_time ON requests(account_id, created_at);
      CREATE INDEX requests_key_time ON requests(key_id, created_at);
      -- Requests refused for a rate limit, per key, for the suspension policy.
      CREATE TABLE limit_rejections (
        key_id TEXT NOT NULL,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX limit_rejections_key_time ON limit_rejections(key_id, created_at);
    `,
  },
  {
    // Per-account sequence numbers make a window's count two index seeks instead of a scan:
    // count = last seq − first seq inside the window + 1. Suspension counts rejections in
    // fixed windows on the key row instead of a row per rejection.
    version: 2,
    sql: `
      ALTER TABLE requests ADD COLUMN seq INTEGER;
      UPDATE requests SET seq = (SELECT COUNT(*) FROM requests r2 WHERE r2.account_id = requests.account_id AND r2.id <= requests.id);
      CREATE INDEX requests_account_seq ON requests(account_id, seq);
      ALTER TABLE api_keys ADD COLUMN rejections INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE api_keys ADD COLUMN rejections_since INTEGER;
      DROP TABLE limit_rejections;
    `,
  },
  {
    // Usage counters per account, model and UTC minute (the admitted request's minute), kept
    // at admission (requests) and at completion (tokens, errors): /v1/usage sums at most a
    // day's minutes instead of scanning the log. Filled from the log once here.
    version: 3,
    sql: `
      CREATE TABLE usage_minutes (
        account_id INTEGER NOT NULL,
        minute INTEGER NOT NULL,
        model TEXT NOT NULL,
        requests INTEGER NOT NULL DEFAULT 0,
        prompt_tokens INTEGER NOT NULL DEFAULT 0,
        completion_tokens INTEGER NOT NULL DEFAULT 0,
        errors INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (account_id, minute, model)
      ) WITHOUT ROWID;
      INSERT INTO usage_minutes (account_id, minute, model, requests, prompt_tokens, completion_tokens, errors)
        SELECT account_id, created_at / 60000, model, COUNT(*), COALESCE(SUM(prompt_tokens), 0),
               COALESCE(SUM(completion_tokens), 0), COALESCE(SUM(status >= 400), 0)
        FROM requests GROUP BY account_id, created_at / 60000, model;
    `,
  },
  {
    // The console: the surface of each request, indexes so every request-log filter is an index
    // range read newest first, hourly and daily rollups that outlive the raw log, and sessions.
    version: 4,
    sql: `
      ALTER TABLE requests ADD COLUMN surface TEXT NOT NULL DEFAULT 'chat';
      CREATE INDEX requests_time ON requests(created_at);
      CREATE INDEX requests_model_time ON requests(model, created_at);
      CREATE INDEX requests_status_time ON requests(status, created_at);
      CREATE TABLE usage_hourly (
        t INTEGER NOT NULL,
        account_id INTEGER NOT NULL,
        key_id TEXT NOT NULL,
        model TEXT NOT NULL,
        surface TEXT NOT NULL,
        requests INTEGER NOT NULL DEFAULT 0,
        prompt_tokens INTEGER NOT NULL DEFAULT 0,
        completion_tokens INTEGER NOT NULL DEFAULT 0,
        errors INTEGER NOT NULL DEFAULT 0,
        rate_limited INTEGER NOT NULL DEFAULT 0,
        latency_ms_sum INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (t, account_id, key_id, model, surface)
      ) WITHOUT ROWID;
      CREATE INDEX usage_hourly_account ON usage_hourly(account_id, t);
      CREATE INDEX usage_hourly_key ON usage_hourly(key_id, t);
      CREATE TABLE usage_daily (
        t INTEGER NOT NULL,
        account_id INTEGER NOT NULL,
        key_id TEXT NOT NULL,
        model TEXT NOT NULL,
        surface TEXT NOT NULL,
        requests INTEGER NOT NULL DEFAULT 0,
        prompt_tokens INTEGER NOT NULL DEFAULT 0,
        completion_tokens INTEGER NOT NULL DEFAULT 0,
        errors INTEGER NOT NULL DEFAULT 0,
        rate_limited INTEGER NOT NULL DEFAULT 0,
        latency_ms_sum INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (t, account_id, key_id, model, surface)
      ) WITHOUT ROWID;
      CREATE INDEX usage_daily_account ON usage_daily(account_id, t);
      CREATE INDEX usage_daily_key ON usage_daily(key_id, t);
      INSERT INTO usage_hourly (t, account_id, key_id, model, surface, requests, prompt_tokens,
          completion_tokens, errors, latency_ms_sum)
        SELECT created_at - created_at % 3600000, account_id, key_id, model, surface, COUNT(*),
          COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(completion_tokens), 0), SUM(status >= 400),
          COALESCE(SUM(latency_ms), 0)
        FROM requests WHERE status IS NOT NULL GROUP BY 1, 2, 3, 4, 5;
      INSERT INTO usage_daily (t, account_id, key_id, model, surface, requests, prompt_tokens,
          completion_tokens, errors, latency_ms_sum)
        SELECT t - t % 86400000, account_id, key_id, model, surface, SUM(requests), SUM(prompt_tokens),
          SUM(completion_tokens), SUM(errors), SUM(latency_ms_sum)
        FROM usage_hourly GROUP BY 1, 2, 3, 4, 5;
      CREATE TABLE console_sessions (
        hash TEXT PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('admin', 'key')),
        key_id TEXT,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL
      );
    `,
  },
  {
    // Usage rows keyed by the gateway's request id (clients' own x-request-ids may repeat). The
    // integer rowid stays the physical key (cheap appends, the request log's cursor); the id is a
    // UNIQUE column that outcomes are written by. Rows from before get an id that no new one has.
    version: 5,
    sql: `
      ALTER TABLE requests ADD COLUMN gateway_id TEXT;
      UPDATE requests SET gateway_id = 'legacy_' || id;
      CREATE UNIQUE INDEX requests_gateway_id ON requests(gateway_id);
    `,
  },
  {
    // The hot path writes only what limits and /v1/usage need. The limiter gets its own narrow
    // log (one primary key: account, time, sequence) and the request log row is written once,
    // complete, with the outcome — so the log's indexes and the gateway id's unique index (only
    // outcome updates looked rows up by it) leave the admission. requests_account_seq was the
    // limiter's alone. The last day's admissions carry over so limits hold across the upgrade
    // (older ones are in no window: the day window is at most a day; a log of millions of rows
    // is not copied at start-up); retention trims them to the day window from then on.
    version: 6,
    sql: `
      CREATE TABLE admissions (
        account_id INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        PRIMARY KEY (account_id, created_at, seq)
      ) WITHOUT ROWID;
      INSERT OR IGNORE INTO admissions (account_id, created_at, seq)
        SELECT account_id, created_at, seq FROM requests
        WHERE seq IS NOT NULL AND created_at >= (SELECT MAX(created_at) FROM requests) - 86400000;
      DROP INDEX requests_account_seq;
      DROP INDEX requests_gateway_id;
    `,
  },
  {
    // The authentication cache's generation (src/auth/cache.ts): one counter, bumped by triggers
    // on every write that can change an authentication answer, so every writer (the CLI, other
    // workers, other processes) invalidates every process's cache without knowing about it.
    // Only the columns auth reads, and only real changes: admission's rejection counting
    // (rejections, rejections_since) must not empty every cache on each 429.
    version: 7,
    sql: `
      CREATE TABLE auth_generation (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL);
      INSERT INTO auth_generation (id, n) VALUES (1, 0);
      CREATE TRIGGER api_keys_auth_insert AFTER INSERT ON api_keys
        BEGIN UPDATE auth_generation SET n = n + 1 WHERE id = 1; END;
      CREATE TRIGGER api_keys_auth_delete AFTER DELETE ON api_keys
        BEGIN UPDATE auth_generation SET n = n + 1 WHERE id = 1; END;
      CREATE TRIGGER api_keys_auth_update
        AFTER UPDATE OF account_id, name, prefix, hash, state, suspended_until ON api_keys
        WHEN OLD.account_id IS NOT NEW.account_id OR OLD.name IS NOT NEW.name
          OR OLD.prefix IS NOT NEW.prefix OR OLD.hash IS NOT NEW.hash OR OLD.state IS NOT NEW.state
          OR OLD.suspended_until IS NOT NEW.suspended_until
        BEGIN UPDATE auth_generation SET n = n + 1 WHERE id = 1; END;
      CREATE TRIGGER accounts_auth_delete AFTER DELETE ON accounts
        BEGIN UPDATE auth_generation SET n = n + 1 WHERE id = 1; END;
      CREATE TRIGGER accounts_auth_update
        AFTER UPDATE OF name, plan, enabled, plan_started_at, plan_expires_at ON accounts
        WHEN OLD.name IS NOT NEW.name OR OLD.plan IS NOT NEW.plan OR OLD.enabled IS NOT NEW.enabled
          OR OLD.plan_started_at IS NOT NEW.plan_started_at OR OLD.plan_expires_at IS NOT NEW.plan_expires_at
        BEGIN UPDATE auth_generation SET n = n + 1 WHERE id = 1; END;
    `,
  },
  {
    // Console sessions bound to the credential they were opened with (console/session-binding.ts):
    // a session without a binding (opened before this) is refused, so the upgrade signs everyone out.
    version: 8,
    sql: 'ALTER TABLE console_sessions ADD COLUMN binding TEXT;',
  },
  // Tokens and money: per-key limits, cost, reservations and their settlement (migrations-v9.ts).
  { version: 9, sql: TOKENS_V9 },
  // Upstream attempts and the answering model in the request log (migrations-v10.ts).
  { version: 10, sql: ATTEMPTS_V10 },
  // Refusals before admission, per key, code and UTC hour (migrations-v11.ts, refusals.ts).
  { version: 11, sql: REFUSALS_V11 },
  // A scope's window sums in one row, read and written once per admission (migrations-v12.ts).
  { version: 12, sql: SCOPES_V12 },
  // Unsettled charges found without an index, from the last sweep's bound (migrations-v13.ts).
  { version: 13, sql: SWEEP_V13 },
  // A charge and its account's limit state in the admission's own row: one page a commit (migrations-v14.ts).
  { version: 14, sql: ADMISSION_CHARGES_V14 },
  // The alert deliveries queue and the marks of alerts sent once per period (migrations-v15.ts).
  { version: 15, sql: ALERTS_V15 },
  // Settled estimates flagged in the request log and counted per minute (migrations-v16.ts).
  { version: 16, sql: ESTIMATED_V16 },
  // Prompt-cache reads and writes counted per minute (migrations-v17.ts).
  { version: 17, sql: CACHE_TOKENS_V17 },
  // Prompt-cache reads and writes per key in the hourly and daily rollups (migrations-v18.ts).
  { version: 18, sql: CACHE_ROLLUPS_V18 },
]

export const LATEST_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version

/** Applies the migrations not applied yet, up to `upTo` (tests stop earlier to build an old database). */
export function migrate(db: Database, now: number, upTo: number = LATEST_VERSION): void {
  db.run(
    'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)',
  )
  // Read and apply under one write lock so processes starting together migrate once.
  db.transaction(() => {
    const row = db.query<{ v: number | null }, []>('SELECT MAX(version) AS v FROM schema_migrations').get()
    const current = row?.v ?? 0
    if (current > LATEST_VERSION) {
      throw new Error(
        `database schema version ${current} is newer than this build supports (${LATEST_VERSION}); upgrade switchyard`,
      )
    }
    // Every migration not yet recorded, in order (not only those above the highest recorded).
    const done = new Set(
      db
        .query<{ version: number }, []>('SELECT version FROM schema_migrations')
        .all()
        .map((r) => r.version),
    )
    for (const m of MIGRATIONS) {
      if (done.has(m.version) || m.version > upTo) continue
      db.run(m.sql)
      db.query('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(m.version, now)
    }
  }).immediate()
}
