/**
 * @module
 * Prepared statements for accounts, plan history and keys.
 */
import type { Database } from 'bun:sqlite'
import { accountOf, keyOf, planChangeOf } from '../account-rows.ts'
import { type KeyLimitColumns, keyLimitValues } from '../key-limits.ts'
import type {
  AccountPage,
  AccountRecord,
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

interface AccountRow {
  id: number
  name: string
  plan: string
  enabled: number
  plan_started_at: number
  plan_expires_at: number | null
  created_at: number
}

interface KeyRow extends KeyLimitColumns {
  id: string
  account_id: number
  account_name: string
  name: string | null
  prefix: string
  state: KeyState
  created_at: number
  rotated_at: number | null
  last_used_at: number | null
  suspended_until: number | null
}

type LimitValues = ReturnType<typeof keyLimitValues>

const LIMIT_COLUMNS = 'k.rpm, k.rpd, k.tpm, k.tpd, k.budget_micros, k.budget_period, k.models'

// last_used_at is derived from the request log instead of written on every request.
const KEY_SELECT = `
  SELECT k.id, k.account_id, a.name AS account_name, k.name, k.prefix, k.state, k.created_at,
         k.rotated_at, k.suspended_until, ${LIMIT_COLUMNS},
         (SELECT MAX(r.created_at) FROM requests r WHERE r.key_id = k.id) AS last_used_at
  FROM api_keys k JOIN accounts a ON a.id = k.account_id`

export class AccountQueries {
  private readonly q

  constructor(private readonly db: Database) {
    this.q = {
      insertAccount: db.query<AccountRow, [string, string, number, number | null, number]>(
        `INSERT INTO accounts (name, plan, enabled, plan_started_at, plan_expires_at, created_at)
         VALUES (?, ?, 1, ?, ?, ?) RETURNING *`,
      ),
      accountById: db.query<AccountRow, [number]>('SELECT * FROM accounts WHERE id = ?'),
      accountByName: db.query<AccountRow, [string]>('SELECT * FROM accounts WHERE name = ?'),
      accountsPage: db.query<AccountRow, { $after: number; $limit: number }>(
        'SELECT * FROM accounts WHERE id > $after ORDER BY id LIMIT $limit',
      ),
      setPlan: db.query<AccountRow, [string, number, number | null, number]>(
        'UPDATE accounts SET plan = ?, plan_started_at = ?, plan_expires_at = ? WHERE id = ? RETURNING *',
      ),
      setPlanIf: db.query<
        AccountRow,
        {
          $plan: string
          $started: number
          $expires: number | null
          $id: number
          $was_plan: string
          $was_expires: number | null
        }
      >(
        `UPDATE accounts SET plan = $plan, plan_started_at = $started, plan_expires_at = $expires
         WHERE id = $id AND plan = $was_plan AND plan_expires_at IS $was_expires RETURNING *`,
      ),
      setEnabled: db.query<AccountRow, [number, number]>(
        'UPDATE accounts SET enabled = ? WHERE id = ? RETURNING *',
      ),
      insertHistory: db.query<null, [number, string, number, number | null, string, number]>(
        `INSERT INTO plan_history (account_id, plan, started_at, expires_at, reason, created_at)
         VALUES (?, ?, ?, ?, ?, ?)`,
      ),
      history: db.query<
        { plan: string; started_at: number; expires_at: number | null; reason: string; created_at: number },
        [number]
      >(
        'SELECT plan, started_at, expires_at, reason, created_at FROM plan_history WHERE account_id = ? ORDER BY id',
      ),
      insertKey: db.query<null, [string, number, string | null, string, string, number, ...LimitValues]>(
        `INSERT INTO api_keys (id, account_id, name, prefix, hash, state, created_at,
           rpm, rpd, tpm, tpd, budget_micros, budget_period, models)
         VALUES (?, ?, ?, ?, ?, 'enabled', ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      setLimits: db.query<null, [...LimitValues, string]>(
        `UPDATE api_keys SET rpm = ?, rpd = ?, tpm = ?, tpd = ?, budget_micros = ?, budget_period = ?, models = ?
         WHERE id = ?`,
      ),
      keyById: db.query<KeyRow, [string]>(`${KEY_SELECT} WHERE k.id = ?`),
      keysPage: db.query<KeyRow, { $account: number | null; $at: number; $id: string; $limit: number }>(
        `${KEY_SELECT}
         WHERE ($account IS NULL OR k.account_id = $account)
           AND (k.created_at > $at OR (k.created_at = $at AND k.id > $id))
         ORDER BY k.created_at, k.id LIMIT $limit`,
      ),
      // Hot path: no last-used subquery.
      keyByHash: db.query<KeyRow & { a_id: number } & Record<`a_${string}`, unknown>, [string]>(
        `SELECT k.id, k.account_id, a.name AS account_name, k.name, k.prefix, k.state, k.created_at,
                k.rotated_at, k.suspended_until, ${LIMIT_COLUMNS}, NULL AS last_used_at,
                a.id AS a_id, a.name AS a_name, a.plan AS a_plan, a.enabled AS a_enabled,
                a.plan_started_at AS a_plan_started_at, a.plan_expires_at AS a_plan_expires_at,
                a.created_at AS a_created_at
         FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.hash = ?`,
      ),
      setKeyState: db.query<null, [KeyState, string]>('UPDATE api_keys SET state = ? WHERE id = ?'),
      rotateKey: db.query<null, [string, string, number, string]>(
        'UPDATE api_keys SET hash = ?, prefix = ?, rotated_at = ? WHERE id = ?',
      ),
      setSuspended: db.query<null, [number | null, string]>(
        'UPDATE api_keys SET suspended_until = ? WHERE id = ?',
      ),
      generation: db.query<{ n: number }, []>('SELECT n FROM auth_generation WHERE id = 1'),
    }
  }

  createAccount(a: NewAccount) {
    return this.db
      .transaction(() => {
        const row = this.q.insertAccount.get(a.name, a.plan, a.planStartedAt, a.planExpiresAt, a.now)!
        this.q.insertHistory.run(row.id, a.plan, a.planStartedAt, a.planExpiresAt, 'created', a.now)
        return accountOf(row)
      })
      .immediate()
  }

  getAccount(nameOrId: string | number): AccountRecord | null {
    const row =
      typeof nameOrId === 'number' ? this.q.accountById.get(nameOrId) : this.q.accountByName.get(nameOrId)
    return row ? accountOf(row) : null
  }

  listAccounts(page?: AccountPage): AccountRecord[] {
    // No page: every account (ids start at 1; LIMIT -1 is no limit).
    return this.q.accountsPage
      .all({ $after: page?.afterId ?? 0, $limit: page?.limit ?? -1 })
      .map((r) => accountOf(r))
  }

  setAccountPlan(id: number, c: PlanChange, expected?: PlanTerm): PlanWrite {
    return this.db
      .transaction(() => {
        const row = expected
          ? this.q.setPlanIf.get({
              $plan: c.plan,
              $started: c.startedAt,
              $expires: c.expiresAt,
              $id: id,
              $was_plan: expected.plan,
              $was_expires: expected.expiresAt,
            })
          : this.q.setPlan.get(c.plan, c.startedAt, c.expiresAt, id)
        if (!row) {
          // Overtaken: the account is no longer as expected; it stays as it is now.
          const now = expected ? this.q.accountById.get(id) : null
          if (now) return { account: accountOf(now), written: false }
          throw new Error(`account ${id} not found`)
        }
        this.q.insertHistory.run(id, c.plan, c.startedAt, c.expiresAt, c.reason, c.createdAt)
        return { account: accountOf(row), written: true }
      })
      .immediate()
  }

  setAccountEnabled(id: number, enabled: boolean): AccountRecord {
    const row = this.q.setEnabled.get(enabled ? 1 : 0, id)
    if (!row) throw new Error(`account ${id} not found`)
    return accountOf(row)
  }

  planHistory(accountId: number): PlanChange[] {
    return this.q.history.all(accountId).map(planChangeOf)
  }

  createKey(k: NewKeyRecord) {
    this.q.insertKey.run(k.id, k.accountId, k.name, k.prefix, k.hash, k.now, ...keyLimitValues(k.limits))
    return this.getKey(k.id)!
  }

  setKeyLimits(id: string, limits: KeyLimits | null): KeyRecord {
    this.q.setLimits.run(...keyLimitValues(limits), id)
    return this.mustKey(id)
  }

  findKeyByHash(hash: string): { key: KeyRecord; account: AccountRecord } | null {
    const r = this.q.keyByHash.get(hash)
    return r ? { key: keyOf(r), account: accountOf(r, 'a_') } : null
  }

  getKey(id: string): KeyRecord | null {
    const row = this.q.keyById.get(id)
    return row ? keyOf(row) : null
  }

  listKeys(accountId?: number, page?: KeyPage): KeyRecord[] {
    const rows = this.q.keysPage.all({
      $account: accountId ?? null,
      // Before every key: created_at is never negative, and '' sorts before every id.
      $at: page?.after?.createdAt ?? -1,
      $id: page?.after?.id ?? '',
      // No page: every key (LIMIT -1 is no limit).
      $limit: page?.limit ?? -1,
    })
    return rows.map(keyOf)
  }

  setKeyState(id: string, state: KeyState): KeyRecord {
    this.q.setKeyState.run(state, id)
    return this.mustKey(id)
  }

  rotateKey(id: string, hash: string, prefix: string, now: number): KeyRecord {
    this.q.rotateKey.run(hash, prefix, now, id)
    return this.mustKey(id)
  }

  setKeySuspended(id: string, until: number | null): KeyRecord {
    this.q.setSuspended.run(until, id)
    return this.mustKey(id)
  }

  /** Kept by triggers (migration 7) on every write that can change an authentication answer. */
  authGeneration(): number {
    return this.q.generation.get()!.n
  }

  private mustKey(id: string): KeyRecord {
    const k = this.getKey(id)
    if (!k) throw new Error(`key ${id} not found`)
    return k
  }
}
