/**
 * @module
 * Accounts, plan history and keys on PostgreSQL. Every statement is a tagged template: Bun.sql
 * sends it as a prepared statement with the values bound, never spliced into the text.
 */
import type { SQL } from 'bun'
import { accountOf, keyOf, num, planChangeOf } from '../account-rows.ts'
import { keyLimitValues } from '../key-limits.ts'
import type {
  AccountPage,
  AccountRecord,
  AccountStore,
  KeyLimits,
  KeyPage,
  KeyRecord,
  KeyState,
  NewAccount,
  NewKeyRecord,
  PlanChange,
  PlanTerm,
  PlanWrite,
} from '../types.ts'
import type { PgBound } from './bounded.ts'

export class PgAccounts implements AccountStore {
  constructor(private readonly db: PgBound) {}

  async createAccount(a: NewAccount): Promise<AccountRecord> {
    return this.db.run((sql) =>
      sql.begin(async (tx) => {
        const [row] = await tx`
        INSERT INTO accounts (name, plan, enabled, plan_started_at, plan_expires_at, created_at)
        VALUES (${a.name}, ${a.plan}, TRUE, ${a.planStartedAt}, ${a.planExpiresAt}, ${a.now})
        RETURNING *`
        await tx`
        INSERT INTO plan_history (account_id, plan, started_at, expires_at, reason, created_at)
        VALUES (${row.id}, ${a.plan}, ${a.planStartedAt}, ${a.planExpiresAt}, 'created', ${a.now})`
        return accountOf(row)
      }),
    )
  }

  async getAccount(nameOrId: string | number): Promise<AccountRecord | null> {
    const rows = await this.db.run((sql) =>
      typeof nameOrId === 'number'
        ? sql`SELECT * FROM accounts WHERE id = ${nameOrId}`
        : sql`SELECT * FROM accounts WHERE name = ${nameOrId}`,
    )
    return rows.length ? accountOf(rows[0]) : null
  }

  async listAccounts(page?: AccountPage): Promise<AccountRecord[]> {
    // No page: every account (ids start at 1; LIMIT NULL is no limit).
    const rows = await this.db.run(
      (sql) =>
        sql`SELECT * FROM accounts WHERE id > ${page?.afterId ?? 0} ORDER BY id LIMIT ${page?.limit ?? null}::bigint`,
    )
    return rows.map((r: object) => accountOf(r))
  }

  async setAccountPlan(id: number, c: PlanChange, expected?: PlanTerm): Promise<PlanWrite> {
    return this.db.run((sql) =>
      sql.begin(async (tx) => {
        const rows = expected
          ? await tx`
            UPDATE accounts SET plan = ${c.plan}, plan_started_at = ${c.startedAt}, plan_expires_at = ${c.expiresAt}
            WHERE id = ${id} AND plan = ${expected.plan}
              AND plan_expires_at IS NOT DISTINCT FROM ${expected.expiresAt}::bigint
            RETURNING *`
          : await tx`
            UPDATE accounts SET plan = ${c.plan}, plan_started_at = ${c.startedAt}, plan_expires_at = ${c.expiresAt}
            WHERE id = ${id} RETURNING *`
        if (!rows.length) {
          // Overtaken: the account is no longer as expected; it stays as it is now.
          const now = expected ? await tx`SELECT * FROM accounts WHERE id = ${id}` : []
          if (now.length) return { account: accountOf(now[0]), written: false }
          throw new Error(`account ${id} not found`)
        }
        await tx`
        INSERT INTO plan_history (account_id, plan, started_at, expires_at, reason, created_at)
        VALUES (${id}, ${c.plan}, ${c.startedAt}, ${c.expiresAt}, ${c.reason}, ${c.createdAt})`
        return { account: accountOf(rows[0]), written: true }
      }),
    )
  }

  async setAccountEnabled(id: number, enabled: boolean): Promise<AccountRecord> {
    const rows = await this.db.run(
      (sql) => sql`UPDATE accounts SET enabled = ${enabled} WHERE id = ${id} RETURNING *`,
    )
    if (!rows.length) throw new Error(`account ${id} not found`)
    return accountOf(rows[0])
  }

  async planHistory(accountId: number): Promise<PlanChange[]> {
    const rows = await this.db.run(
      (sql) => sql`
        SELECT plan, started_at, expires_at, reason, created_at FROM plan_history
        WHERE account_id = ${accountId} ORDER BY id`,
    )
    return rows.map(planChangeOf)
  }

  async createKey(k: NewKeyRecord): Promise<KeyRecord> {
    const [rpm, rpd, tpm, tpd, budget, period, models] = keyLimitValues(k.limits)
    return this.db.run(async (sql) => {
      await sql`
        INSERT INTO api_keys (id, account_id, name, prefix, hash, state, created_at,
          rpm, rpd, tpm, tpd, budget_micros, budget_period, models)
        VALUES (${k.id}, ${k.accountId}, ${k.name}, ${k.prefix}, ${k.hash}, 'enabled', ${k.now},
          ${rpm}, ${rpd}, ${tpm}, ${tpd}, ${budget}, ${period}, ${models})`
      return mustKey(sql, k.id)
    })
  }

  async setKeyLimits(id: string, limits: KeyLimits | null): Promise<KeyRecord> {
    const [rpm, rpd, tpm, tpd, budget, period, models] = keyLimitValues(limits)
    return this.db.run(async (sql) => {
      await sql`
        UPDATE api_keys SET rpm = ${rpm}, rpd = ${rpd}, tpm = ${tpm}, tpd = ${tpd}, budget_micros = ${budget},
          budget_period = ${period}, models = ${models}
        WHERE id = ${id}`
      return mustKey(sql, id)
    })
  }

  /** Hot path: one indexed lookup, no last-used subquery. */
  async findKeyByHash(hash: string): Promise<{ key: KeyRecord; account: AccountRecord } | null> {
    const rows = await this.db.run(
      (sql) => sql`
        SELECT k.id, k.account_id, a.name AS account_name, k.name, k.prefix, k.state, k.created_at,
               k.rotated_at, k.suspended_until, NULL AS last_used_at,
               k.rpm, k.rpd, k.tpm, k.tpd, k.budget_micros, k.budget_period, k.models,
               a.id AS a_id, a.name AS a_name, a.plan AS a_plan, a.enabled AS a_enabled,
               a.plan_started_at AS a_plan_started_at, a.plan_expires_at AS a_plan_expires_at,
               a.created_at AS a_created_at
        FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.hash = ${hash}`,
    )
    return rows.length ? { key: keyOf(rows[0]), account: accountOf(rows[0], 'a_') } : null
  }

  async getKey(id: string): Promise<KeyRecord | null> {
    return this.db.run((sql) => getKey(sql, id))
  }

  async listKeys(accountId?: number, page?: KeyPage): Promise<KeyRecord[]> {
    const rows = await this.db.run((sql) => {
      // Before every key: created_at is never negative, and '' sorts before every id.
      const at = page?.after?.createdAt ?? -1
      const id = page?.after?.id ?? ''
      // No page: every key (LIMIT NULL is no limit).
      return sql`${keySelect(sql)}
        WHERE (${accountId ?? null}::bigint IS NULL OR k.account_id = ${accountId ?? null}::bigint)
          AND (k.created_at > ${at} OR (k.created_at = ${at} AND k.id > ${id}))
        ORDER BY k.created_at, k.id LIMIT ${page?.limit ?? null}::bigint`
    })
    return rows.map(keyOf)
  }

  async setKeyState(id: string, state: KeyState): Promise<KeyRecord> {
    return this.db.run(async (sql) => {
      await sql`UPDATE api_keys SET state = ${state} WHERE id = ${id}`
      return mustKey(sql, id)
    })
  }

  async rotateKey(id: string, hash: string, prefix: string, now: number): Promise<KeyRecord> {
    return this.db.run(async (sql) => {
      await sql`UPDATE api_keys SET hash = ${hash}, prefix = ${prefix}, rotated_at = ${now} WHERE id = ${id}`
      return mustKey(sql, id)
    })
  }

  async setKeySuspended(id: string, until: number | null): Promise<KeyRecord> {
    return this.db.run(async (sql) => {
      await sql`UPDATE api_keys SET suspended_until = ${until} WHERE id = ${id}`
      return mustKey(sql, id)
    })
  }

  /** Kept by triggers (migration 7) on every write that can change an authentication answer. */
  async authGeneration(): Promise<number> {
    const [row] = await this.db.run((sql) => sql`SELECT n FROM auth_generation WHERE id = 1`)
    return num(row.n)
  }

  close(): void {}
}

/** last_used_at is derived from the request log instead of written on every request. */
function keySelect(sql: SQL) {
  return sql`
    SELECT k.id, k.account_id, a.name AS account_name, k.name, k.prefix, k.state, k.created_at,
           k.rotated_at, k.suspended_until,
           k.rpm, k.rpd, k.tpm, k.tpd, k.budget_micros, k.budget_period, k.models,
           (SELECT MAX(r.created_at) FROM requests r WHERE r.key_id = k.id) AS last_used_at
    FROM api_keys k JOIN accounts a ON a.id = k.account_id`
}

async function getKey(sql: SQL, id: string): Promise<KeyRecord | null> {
  const rows = await sql`${keySelect(sql)} WHERE k.id = ${id}`
  return rows.length ? keyOf(rows[0]) : null
}

async function mustKey(sql: SQL, id: string): Promise<KeyRecord> {
  const k = await getKey(sql, id)
  if (!k) throw new Error(`key ${id} not found`)
  return k
}
