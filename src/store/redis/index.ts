/**
 * @module
 * Admissions in Redis (`limits.redis_url`): one script per admission (admit-script.ts), while
 * the database keeps accounts and usage. An admitted request's usage row is written to the
 * database before the request goes upstream, so a replica killed mid-request loses no record.
 *
 * Unreachable Redis fails closed by default: 503 `limiter_unavailable` with `retry-after`
 * (`limits.on_unavailable: allow` serves without limits instead, and still records usage).
 *
 * Redis is never the only record of a charge: an account whose state Redis lost (no `built`
 * marker) admits nothing until it is rebuilt from its database rows (rebuild.ts); an admission
 * script that runs after the gateway gave up on it refuses (its deadline); a settlement that
 * fails is retried with the outcomes' batch; and `reconcile` releases what Redis still holds for
 * requests the database calls settled or never admitted.
 */
import { RedisClient } from 'bun'
import {
  type ChargeDecision,
  chargeOutcome,
  type ExtendDecision,
  extendOutcome,
} from '../../limits/charge-result.ts'
import { periodBounds, rowState } from '../../limits/rows.ts'
import type { Extended, Extension, Settlement, WindowSpans } from '../../limits/types.ts'
import { limiterUnavailable } from '../../limits/unavailable.ts'
import { consumed, windowOf } from '../../limits/windows.ts'
import { SettlementPendingError } from '../errors.ts'
import type {
  AccountStore,
  AdmissionLog,
  AdmitInput,
  AdmitResult,
  Limiter,
  Refusal,
  WindowLimit,
} from '../types.ts'
import { ADMIT_SCRIPT } from './admit-script.ts'
import { EXTEND_SCRIPT, SETTLE_SCRIPT } from './charge-script.ts'
import { heldCharges } from './held.ts'
import { rebuildState } from './rebuild.ts'
import { REBUILD_SCRIPT } from './rebuild-script.ts'

/** A command that takes longer than this counts as Redis being unreachable. */
const COMMAND_TIMEOUT_MS = 2000
const CONNECT_TIMEOUT_MS = 1000
const SCRIPT_SHA = new Bun.CryptoHasher('sha1').update(ADMIT_SCRIPT).digest('hex')
const SETTLE_SHA = new Bun.CryptoHasher('sha1').update(SETTLE_SCRIPT).digest('hex')
const EXTEND_SHA = new Bun.CryptoHasher('sha1').update(EXTEND_SCRIPT).digest('hex')
/**
 * An admission script still queued this long after it was sent refuses (on the Redis server's
 * clock): half the command timeout, so the gateway has not yet given up on any admission Redis
 * makes, with up to that much clock difference between the two machines either way.
 */
const ADMIT_DEADLINE_MS = COMMAND_TIMEOUT_MS / 2
/**
 * The `built` marker's lifetime, extended by every admission: longer than any other key of the
 * account lives (a month's spend lives to the month's end plus a day), so it is the last to go.
 */
const BUILT_TTL_MS = 35 * 86_400_000

export interface RedisLimiterOptions {
  url: string
  windows: WindowSpans
  onUnavailable: 'reject' | 'allow'
  /** Decide on the Redis server's clock (production); false = the caller's `now` (tests). */
  engineTime: boolean
  log: AdmissionLog
  accounts: Pick<AccountStore, 'setKeySuspended'>
  warn(message: string, fields?: Record<string, unknown>): void
}

/** The keys of one account, hash-tagged so Redis Cluster keeps them in one slot. */
export function accountKeys(accountId: number, keyId: string): [string, string, string] {
  const tag = `{acct:${accountId}}`
  return [`sy:${tag}:log`, `sy:${tag}:seq`, `sy:${tag}:rej:${keyId}`]
}

type Reply = [number, string, number, number, number, number, number, number, number, string?]

/** The account's key prefix (its hash tag), under which the charge keys live. */
const prefixOf = (accountId: number) => `sy:{acct:${accountId}}:`

export class RedisLimiter implements Limiter {
  private client: RedisClient | null = null
  private connecting: Promise<RedisClient> | null = null
  private down = false
  private readonly rebuilding = new Map<number, Promise<void>>()

  constructor(private readonly opts: RedisLimiterOptions) {}

  /** From the charge keys (charge-script.ts), read without a script: nothing is charged. */
  rowStates: Limiter['rowStates'] = async (q) => {
    let client: RedisClient
    try {
      client = await this.connected()
    } catch {
      throw limiterUnavailable()
    }
    const pre = prefixOf(q.accountId)
    const at = this.opts.engineTime ? await this.serverNow(client) : q.now
    // Not built (lost, or no admission yet): what a rebuild would hold, from the database's rows.
    const built = Number(await client.send('EXISTS', [`${pre}built`]))
    const fromDb = built ? null : (await this.databaseState(q.accountId, at)).state
    const holds = q.rows.some((r) => r.resource !== 'requests') ? await heldCharges(client, pre) : []
    return Promise.all(
      q.rows.map(async (row) => {
        const sc = row.scope === 'account' ? 'a' : `k:${q.keyId}`
        if (row.resource === 'requests' && row.scope === 'account') {
          // The account's requests are the admission log's.
          const w = await this.windows(q.accountId, at, null, null)
          const win = row.window === 'minute' ? w.minute : w.day
          return rowState(row, win.used, win.resetAt === null ? null : win.resetAt, 0)
        }
        if (row.window === 'period') {
          const p = periodBounds(row.period!, at)
          const key = `${pre}sp:${sc}:${row.period}:${p.start}`
          const v = fromDb
            ? (fromDb.spend.find((x) => x[0] === key)?.[1] ?? 0)
            : await client.send('GET', [key])
          const held = holds.reduce((n, h) => n + (h.s.includes(key) ? h.m : 0), 0)
          return rowState(row, Number(v ?? 0), null, p.resetsAt, held)
        }
        const span = row.window === 'minute' ? this.opts.windows.minuteMs : this.opts.windows.dayMs
        const base = `${pre}c:${sc}:${row.resource}:${row.window}`
        const held =
          row.resource === 'requests'
            ? undefined
            : holds.reduce((n, h) => n + (h.at > at - span && h.w.includes(base) ? h.t : 0), 0)
        if (fromDb) {
          const inside = (fromDb.windows.find((w) => w.base === base)?.m ?? []).filter(
            (m) => m[1] > at - span,
          )
          const firstAt = inside.length ? Math.min(...inside.map((m) => m[1])) : null
          return rowState(
            row,
            inside.reduce((n, m) => n + m[2], 0),
            firstAt,
            span,
            held,
          )
        }
        if (row.resource === 'tokens' && !Number(await client.send('EXISTS', [`${base}:z`]))) {
          // A window no admission charges here (a budget-only plan's tokens): the database's rows.
          const t = await this.opts.log.tokensSince(
            q.accountId,
            row.scope === 'key' ? q.keyId : null,
            at - span,
          )
          return rowState(row, t.used, t.first, span, held)
        }
        // Member, score pairs: flat or nested, as the client's protocol version returns them.
        const reply = (await client.send('ZRANGEBYSCORE', [
          `${base}:z`,
          `(${at - span}`,
          '+inf',
          'WITHSCORES',
        ])) as unknown[]
        const inside = reply.flat() as Array<string | number>
        if (!inside.length) return rowState(row, 0, null, span, held)
        const members = inside.filter((_, i) => i % 2 === 0).map(String)
        const amounts = (await client.send('HMGET', [`${base}:a`, ...members])) as Array<string | null>
        const used = amounts.reduce((n, a) => n + Number(a ?? 0), 0)
        return rowState(row, used, Number(inside[1]), span, held)
      }),
    )
  }

  /**
   * The account's state as the database's rows give it (rebuild.ts): `keep` the longest request
   * window to log (0: none), `logLimit` its most entries. What a rebuild writes, and what
   * `rowStates` reads without writing it.
   */
  private async databaseState(accountId: number, now: number, keep = 0, logLimit = 0) {
    const { minuteMs, dayMs } = this.opts.windows
    const periods = periodsAt(now)
    const history = await this.opts.log.chargeHistory({
      accountId,
      now,
      logSince: now - keep,
      logLimit,
      minuteMs,
      dayMs,
      minuteBucketMs: Math.max(1, Math.floor(minuteMs / 60)),
      dayBucketMs: Math.max(1, Math.floor(dayMs / 1440)),
      periods: { day: periods.day[0], week: periods.week[0], month: periods.month[0] },
    })
    const state = rebuildState(history, {
      prefix: prefixOf(accountId),
      now,
      keep,
      spans: this.opts.windows,
      periods,
    })
    return { history, state }
  }

  private async serverNow(client: RedisClient): Promise<number> {
    const [s, us] = (await client.send('TIME', [])) as [string, string]
    return Number(s) * 1000 + Math.floor(Number(us) / 1000)
  }
  /**
   * Reservations the database's admission log still calls unsettled past `before` (their replica
   * died mid-request): each settled to itself, the most it could have cost (the upstream may have
   * answered it in full), here, then in the log.
   */
  sweepReservations: Limiter['sweepReservations'] = async (before) => {
    const stale = await this.opts.log.unsettled(before, 1000)
    if (!stale.length) return 0
    // Negative: as reserved (the settle script reads the reservation it holds).
    const settlements = stale.map((r) => ({
      handle: r.gatewayId,
      accountId: r.accountId,
      tokens: -1,
      micros: -1,
    }))
    await this.settle(settlements)
    await this.opts.log.markSettled(settlements)
    return stale.length
  }

  /** Settles each reservation once (the settle script), after the outcomes are in the database. */
  async settle(items: Settlement[]): Promise<void> {
    if (!items.length) return
    try {
      const client = await this.connected()
      // Each handle settles on its own and at most once: sent together, the client pipelines them.
      await Promise.all(items.map((s) => this.settleOne(client, s)))
    } catch (err) {
      // The outcomes are in the database already; the batch is retried until Redis settles.
      throw new SettlementPendingError(`redis settlement failed: ${(err as Error)?.message ?? String(err)}`)
    }
  }

  /**
   * Grows a live reservation (the extend script, charge-script.ts), atomic with admissions on the
   * account's slot; the database's admission row grows after it (`recordGrowth`).
   */
  async extend(q: Extension): Promise<Extended> {
    const { minuteMs, dayMs } = this.opts.windows
    const args = [
      '1',
      `${prefixOf(q.accountId)}res`,
      q.handle as string,
      String(q.tokens),
      String(q.micros),
      JSON.stringify({ rows: q.rows, periods: periodsAt(q.now) }),
      prefixOf(q.accountId),
      q.keyId,
      String(minuteMs),
      String(dayMs),
      String(this.opts.engineTime ? -1 : q.now),
    ]
    let reply: unknown
    try {
      const client = await this.connected()
      reply = await withTimeout(
        client.send('EVALSHA', [EXTEND_SHA, ...args]).catch((err: Error) => {
          if (/NOSCRIPT/.test(String(err?.message))) return client.send('EVAL', [EXTEND_SCRIPT, ...args])
          throw err
        }),
      ).catch((err) => {
        if ((err as { code?: string })?.code !== 'ERR_REDIS_SERVER_ERROR') this.drop(client)
        throw err
      })
    } catch (err) {
      // Unreachable: nothing grows (the answer ends at what it holds), whatever `on_unavailable`.
      this.noteDown(err)
      return { tokens: 0, micros: 0, states: [] }
    }
    const d = JSON.parse(String(reply)) as ExtendDecision & { at?: number }
    const e = extendOutcome(q, d, d.at ?? q.now, this.opts.windows)
    // The database's row follows, so a rebuild holds the request at what it grew to. Granted in
    // Redis already: a failure here costs only a rebuild's view of this request (warned).
    if (e.tokens || e.micros)
      await this.opts.log.recordGrowth(q.handle as string, e.tokens, e.micros).catch((err: Error) =>
        this.opts.warn('a reservation grown in redis was not recorded in the database', {
          error: err?.message ?? String(err),
        }),
      )
    return e
  }

  /** Once per handle (the script deletes its `res` entry): a retry settles nothing twice. */
  private async settleOne(client: RedisClient, s: Settlement): Promise<number> {
    const args = ['1', `${prefixOf(s.accountId)}res`, s.handle as string, String(s.tokens), String(s.micros)]
    const n = await withTimeout(
      client.send('EVALSHA', [SETTLE_SHA, ...args]).catch((err: Error) => {
        if (/NOSCRIPT/.test(String(err?.message))) return client.send('EVAL', [SETTLE_SCRIPT, ...args])
        throw err
      }),
    ).catch((err) => {
      if ((err as { code?: string })?.code !== 'ERR_REDIS_SERVER_ERROR') this.drop(client)
      throw err
    })
    return Number(n)
  }

  /**
   * Reservations Redis still holds, made before `before`, that the database calls settled (their
   * Redis settlement was lost with the process that owed it, or rebuilt from rows read before it
   * settled) or never admitted (its admission row was never written): each settled to what the
   * database says, or to nothing. The ones the database calls unsettled are `sweepReservations`'.
   */
  reconcile: NonNullable<Limiter['reconcile']> = async (before) => {
    const client = await this.connected()
    let cursor = '0'
    let released = 0
    do {
      const [next, keys] = (await withTimeout(
        client.send('SCAN', [cursor, 'MATCH', 'sy:{acct:*}:res', 'COUNT', '1000']),
      )) as [string, string[]]
      cursor = String(next)
      for (const key of keys) {
        const accountId = Number(/\{acct:(\d+)\}/.exec(key)?.[1])
        if (!Number.isSafeInteger(accountId)) continue
        const entries = (await withTimeout(client.send('HGETALL', [key]))) as
          | Record<string, string>
          | string[]
        const pairs = Array.isArray(entries)
          ? entries.flatMap((v, i) => (i % 2 ? [] : [[v, entries[i + 1]!] as const]))
          : Object.entries(entries)
        const old = pairs.filter(([, v]) => {
          const at = (JSON.parse(v) as { at?: number }).at
          return typeof at === 'number' && at < before
        })
        if (!old.length) continue
        const rows = await this.opts.log.admissionsByHandle(old.map(([h]) => h))
        for (const [handle] of old) {
          const row = rows.get(handle)
          if (row && !row.settled) continue
          const s = { handle, accountId, tokens: row?.tokens ?? 0, micros: row?.micros ?? 0 }
          released += await this.settleOne(client, s as Settlement)
        }
      }
    } while (cursor !== '0')
    return released
  }

  async admit(input: AdmitInput): Promise<AdmitResult> {
    const { minuteMs, dayMs } = this.opts.windows
    let r: Reply
    let sent = Date.now()
    try {
      r = await this.run(input.accountId, input.keyId, input, 'admit')
      if (r[0] === 2) {
        await this.rebuild(input.accountId, input.now, input.rpm, input.rpd)
        sent = Date.now()
        r = await this.run(input.accountId, input.keyId, input, 'admit')
      }
    } catch (err) {
      // The rebuild's read of the database failed: the store's error (503 store_busy or
      // store_unavailable), not Redis being down — which `allow` would serve without limits.
      if (err instanceof FromDatabase) throw err.cause
      this.noteDown(err)
      if (this.opts.onUnavailable === 'reject') throw limiterUnavailable()
      const at = input.now
      const none = windowOf(null, 0, null, 0)
      await this.opts.log.recordAdmitted(input, at)
      return {
        admitted: true,
        at,
        gatewayId: input.gatewayId,
        minute: none,
        day: none,
      }
    }
    if (r[0] === 2) throw limiterUnavailable()
    if (r[0] === 3) {
      // Past its deadline on Redis's clock: Redis ran it late (paused or overloaded), or — when
      // the answer came back sooner than the deadline's margin — Redis's clock is ahead of ours.
      const waited = Date.now() - sent
      const why =
        waited < ADMIT_DEADLINE_MS
          ? 'redis admission past its deadline on the redis clock, answered at once; check the clocks'
          : 'redis ran an admission over its deadline after it was sent (redis slow or paused); refused'
      this.opts.warn(why, { redis_ms: r[3], local_ms: Date.now(), waited_ms: waited })
      throw limiterUnavailable()
    }
    const at = r[3]
    const minute = windowOf(input.rpm, r[4], first(r[5]), minuteMs)
    const day = windowOf(input.rpd, r[6], first(r[7]), dayMs)
    const charged =
      input.charge && r[9]
        ? chargeOutcome(
            input.charge,
            r[9] as unknown as ChargeDecision,
            at,
            this.opts.windows,
            input.gatewayId,
          )
        : null
    if (r[0] !== 1) {
      const suspendedUntil = first(r[8])
      if (suspendedUntil !== null) await this.opts.accounts.setKeySuspended(input.keyId, suspendedUntil)
      return {
        admitted: false,
        at,
        window: r[1] as 'minute' | 'day',
        retryAt: r[2],
        minute,
        day,
        suspendedUntil,
        ...(charged && 'refusal' in charged ? { charge: charged.refusal } : {}),
      }
    }
    // Recorded before the caller goes upstream: every admitted request has its usage row.
    const reserved = charged && 'reservation' in charged ? charged.reservation : undefined
    await this.opts.log.recordAdmitted(
      input,
      at,
      reserved ? { tokens: reserved.tokens, micros: reserved.micros } : undefined,
    )
    return {
      admitted: true,
      at,
      gatewayId: input.gatewayId,
      minute: consumed(minute, at, minuteMs),
      day: consumed(day, at, dayMs),
      ...(charged && 'reservation' in charged ? { reservation: charged.reservation } : {}),
    }
  }

  /** The script's refusal count alone; unreachable Redis → 503 `limiter_unavailable`, whatever `on_unavailable`. */
  async countRejection(r: Refusal): Promise<number | null> {
    let reply: Reply
    try {
      reply = await this.run(r.accountId, r.keyId, { ...r, rpm: null, rpd: null }, 'reject')
    } catch {
      throw limiterUnavailable()
    }
    const suspendedUntil = first(reply[8])
    if (suspendedUntil !== null) await this.opts.accounts.setKeySuspended(r.keyId, suspendedUntil)
    return suspendedUntil
  }

  async windows(accountId: number, now: number, rpm: number | null, rpd: number | null) {
    const { minuteMs, dayMs } = this.opts.windows
    let r: Reply
    try {
      r = await this.run(accountId, '-', { now, rpm, rpd, suspension: null }, 'peek')
      // Without request limits the database counts both windows: nothing to rebuild for them.
      if (r[0] === 2 && (rpm !== null || rpd !== null)) {
        await this.rebuild(accountId, now, rpm, rpd)
        r = await this.run(accountId, '-', { now, rpm, rpd, suspension: null }, 'peek')
      }
    } catch (err) {
      if (err instanceof FromDatabase) throw err.cause
      throw limiterUnavailable()
    }
    if (r[0] === 2 && (rpm !== null || rpd !== null)) throw limiterUnavailable()
    const at = r[3]
    // Redis logs only the limited windows; the database counts the others.
    const unlimited = async (span: number): Promise<WindowLimit> =>
      windowOf(null, await this.opts.log.countSince(accountId, at - span), null, span)
    const [minute, day] = await Promise.all([
      rpm === null ? unlimited(minuteMs) : windowOf(rpm, r[4], first(r[5]), minuteMs),
      rpd === null ? unlimited(dayMs) : windowOf(rpd, r[6], first(r[7]), dayMs),
    ])
    return { minute, day }
  }

  /**
   * Builds the account's state from its database rows, once across replicas (the script does
   * nothing where the marker is back); concurrent admissions of the account in this process
   * share one rebuild.
   */
  private rebuild(accountId: number, at: number, rpm: number | null, rpd: number | null): Promise<void> {
    let p = this.rebuilding.get(accountId)
    if (p) return p
    p = this.rebuildNow(accountId, at, rpm, rpd).finally(() => this.rebuilding.delete(accountId))
    this.rebuilding.set(accountId, p)
    return p
  }

  private async rebuildNow(
    accountId: number,
    at: number,
    rpm: number | null,
    rpd: number | null,
  ): Promise<void> {
    const { minuteMs, dayMs } = this.opts.windows
    const client = await this.connected()
    const now = this.opts.engineTime ? await this.serverNow(client) : at
    const keep = Math.max(rpm === null ? 0 : minuteMs, rpd === null ? 0 : dayMs)
    const started = performance.now()
    const { history, state } = await this.databaseState(
      accountId,
      now,
      keep,
      keep ? Math.max(rpm ?? 0, rpd ?? 0) : 0,
    ).catch((err: unknown) => {
      throw new FromDatabase(err)
    })
    const built = await withTimeout(
      client.send('EVAL', [
        REBUILD_SCRIPT,
        '0',
        prefixOf(accountId),
        JSON.stringify(state),
        String(BUILT_TTL_MS),
      ]),
    )
    if (Number(built))
      this.opts.warn('redis limiter state rebuilt from the database', {
        account_id: accountId,
        rows: history.log.length + history.buckets.length + history.open.length,
        ms: Math.round(performance.now() - started),
      })
  }

  close(): void {
    this.client?.close()
    this.client = null
  }

  private async run(
    accountId: number,
    keyId: string,
    input: Pick<AdmitInput, 'now' | 'rpm' | 'rpd' | 'suspension'> &
      Partial<Pick<AdmitInput, 'charge' | 'gatewayId'>>,
    mode: 'admit' | 'peek' | 'reject',
  ): Promise<Reply> {
    const { minuteMs, dayMs } = this.opts.windows
    const s = input.suspension
    const args = [
      '3',
      ...accountKeys(accountId, keyId),
      String(input.rpm ?? -1),
      String(input.rpd ?? -1),
      String(minuteMs),
      String(dayMs),
      String(s ? s.maxRejections : -1),
      String(s?.windowMs ?? 0),
      String(s?.durationMs ?? 0),
      String(this.opts.engineTime ? -1 : input.now),
      mode,
      input.charge ? JSON.stringify({ ...input.charge, periods: periodsAt(input.now) }) : '',
      prefixOf(accountId),
      keyId,
      input.gatewayId ?? '',
      String(mode === 'admit' && this.opts.engineTime ? Date.now() + ADMIT_DEADLINE_MS : -1),
      String(BUILT_TTL_MS),
    ]
    const client = await this.connected()
    const reply = await withTimeout(
      client.send('EVALSHA', [SCRIPT_SHA, ...args]).catch((err: Error) => {
        // A restarted server has an empty script cache: send the script itself once.
        if (/NOSCRIPT/.test(String(err?.message))) return client.send('EVAL', [ADMIT_SCRIPT, ...args])
        throw err
      }),
    ).catch((err) => {
      if ((err as { code?: string })?.code !== 'ERR_REDIS_SERVER_ERROR') this.drop(client)
      throw err
    })
    if (this.down) {
      this.down = false
      this.opts.warn('redis limiter reachable again')
    }
    return reply as Reply
  }

  private async connected(): Promise<RedisClient> {
    if (this.client?.connected) return this.client
    this.connecting ??= (async () => {
      this.client?.close()
      this.client = null
      // No offline queue: while Redis is down a request must fail now, not wait for it.
      const c = new RedisClient(this.opts.url, {
        enableOfflineQueue: false,
        autoReconnect: false,
        connectionTimeout: CONNECT_TIMEOUT_MS,
      })
      try {
        await withTimeout(c.connect())
      } catch (err) {
        c.close()
        throw err
      }
      this.client = c
      return c
    })().finally(() => {
      this.connecting = null
    })
    return this.connecting
  }

  private drop(client: RedisClient): void {
    if (this.client === client) this.client = null
    client.close()
  }

  private noteDown(err: unknown): void {
    if (this.down) return
    this.down = true
    // Once per outage; `run` logs when it is reachable again.
    const doing =
      this.opts.onUnavailable === 'reject'
        ? 'refusing requests with 503 limiter_unavailable'
        : 'serving without limits (limits.on_unavailable: allow)'
    this.opts.warn(`redis limiter unreachable; ${doing}`, { error: (err as Error)?.message ?? String(err) })
  }
}

const first = (v: number): number | null => (v < 0 ? null : v)

/** A failure of the database's side of a rebuild, kept apart from Redis's own (see `admit`). */
class FromDatabase extends Error {
  constructor(override readonly cause: unknown) {
    super('the database failed during a Redis rebuild')
  }
}

/** The calendar periods holding `now` as [start, end] (the script charges money per period). */
function periodsAt(now: number): Record<'day' | 'week' | 'month', [number, number]> {
  const of = (p: 'day' | 'week' | 'month'): [number, number] => {
    const b = periodBounds(p, now)
    return [b.start, b.resetsAt]
  }
  return { day: of('day'), week: of('week'), month: of('month') }
}

function withTimeout<T>(p: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`redis did not answer within ${COMMAND_TIMEOUT_MS} ms`)),
      COMMAND_TIMEOUT_MS,
    )
  })
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer))
}
