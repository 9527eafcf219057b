/**
 * @module
 * The embedded SQLite store (bun:sqlite, WAL). Every statement is prepared with bound
 * parameters. `synchronous=NORMAL` in WAL mode keeps every committed transaction across a
 * process crash (`kill -9`); only an OS crash or power loss can lose the last commits.
 *
 * Admissions are group-committed: those requested in the same event-loop turn share one write
 * transaction, because the commit (not the insert) is most of an admission's cost. Each
 * caller's promise still resolves only after its admission is committed.
 */
import { Database } from 'bun:sqlite'
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import type {
  AdmitInput,
  AdmitResult,
  Completion,
  KeyState,
  PlanChange,
  Store,
  SuspensionInput,
} from '../types.ts'
import { AccountQueries } from './accounts.ts'
import { LimiterQueries, type WindowSpans } from './limiter.ts'
import { migrate } from './migrations.ts'
import { UsageQueries } from './usage.ts'

export interface SqliteOptions {
  path: string
  windows?: WindowSpans
  busyTimeoutMs?: number
  now?: number
}

export function openSqliteStore(opts: SqliteOptions): SqliteStore {
  if (opts.path !== ':memory:') mkdirSync(dirname(opts.path), { recursive: true })
  const db = new Database(opts.path, { create: true, strict: true })
  db.run(`PRAGMA busy_timeout = ${Math.trunc(opts.busyTimeoutMs ?? 5000)}`)
  db.run('PRAGMA journal_mode = WAL')
  db.run('PRAGMA synchronous = NORMAL')
  db.run('PRAGMA foreign_keys = ON')
  migrate(db, opts.now ?? Date.now())
  return new SqliteStore(db, opts.windows)
}

interface PendingAdmit {
  input: AdmitInput
  resolve: (r: AdmitResult) => void
  reject: (err: unknown) => void
}

export class SqliteStore implements Store {
  private readonly accounts: AccountQueries
  private readonly limiter: LimiterQueries
  private readonly usage: UsageQueries
  private pendingAdmits: PendingAdmit[] = []

  constructor(
    readonly db: Database,
    windows?: WindowSpans,
  ) {
    this.accounts = new AccountQueries(db)
    this.limiter = new LimiterQueries(db, windows)
    this.usage = new UsageQueries(db)
  }

  async createAccount(a: {
    name: string
    plan: string
    planStartedAt: number
    planExpiresAt: number | null
    now: number
  }) {
    return this.accounts.createAccount(a)
  }
  async getAccount(nameOrId: string | number) {
    return this.accounts.getAccount(nameOrId)
  }
  async listAccounts() {
    return this.accounts.listAccounts()
  }
  async setAccountPlan(id: number, change: PlanChange) {
    return this.accounts.setAccountPlan(id, change)
  }
  async setAccountEnabled(id: number, enabled: boolean) {
    return this.accounts.setAccountEnabled(id, enabled)
  }
  async planHistory(accountId: number) {
    return this.accounts.planHistory(accountId)
  }
  async createKey(k: {
    id: string
    accountId: number
    name: string | null
    prefix: string
    hash: string
    now: number
  }) {
    return this.accounts.createKey(k)
  }
  async findKeyByHash(hash: string) {
    return this.accounts.findKeyByHash(hash)
  }
  async getKey(id: string) {
    return this.accounts.getKey(id)
  }
  async listKeys(accountId?: number) {
    return this.accounts.listKeys(accountId)
  }
  async setKeyState(id: string, state: KeyState) {
    return this.accounts.setKeyState(id, state)
  }
  async rotateKey(id: string, hash: string, prefix: string, now: number) {
    return this.accounts.rotateKey(id, hash, prefix, now)
  }
  async setKeySuspended(id: string, until: number | null) {
    return this.accounts.setKeySuspended(id, until)
  }
  admit(input: AdmitInput): Promise<AdmitResult> {
    return new Promise((resolve, reject) => {
      if (this.pendingAdmits.push({ input, resolve, reject }) === 1) setImmediate(this.flushAdmits)
    })
  }

  private readonly flushAdmits = (): void => {
    const batch = this.pendingAdmits
    if (!batch.length) return
    this.pendingAdmits = []
    let results: Array<AdmitResult | Error>
    try {
      results = this.limiter.admitMany(batch.map((p) => p.input))
    } catch (err) {
      for (const p of batch) p.reject(err)
      return
    }
    batch.forEach((p, i) => {
      const r = results[i]!
      if (r instanceof Error) p.reject(r)
      else p.resolve(r)
    })
  }
  async countRejection(keyId: string, now: number, suspension: SuspensionInput) {
    return this.limiter.countRejection(keyId, now, suspension)
  }
  async windows(accountId: number, now: number, rpm: number | null, rpd: number | null) {
    return this.limiter.windows(accountId, now, rpm, rpd)
  }
  async complete(batch: Completion[]) {
    this.usage.complete(batch)
  }
  async usageSummary(accountId: number, now: number, dayStart: number) {
    return this.usage.summary(accountId, now, dayStart)
  }
  async prune(before: number) {
    this.usage.prune(before)
  }
  close() {
    this.flushAdmits()
    this.db.close()
  }
}
