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
import type { RedisClient } from 'bun'
import {
  type ChargeDecision,
  chargeOutcome,
  type ExtendDecision,
  extendOutcome,
} from '../../limits/charge-result.ts'
import type { Extended, Extension, Settlement, WindowSpans } from '../../limits/types.ts'
import { limiterUnavailable } from '../../limits/unavailable.ts'
import { consumed, windowOf } from '../../limits/windows.ts'
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
import { EXTEND_SCRIPT } from './charge-script.ts'
import { COMMAND_TIMEOUT_MS, RedisConnection, script, withTimeout } from './connection.ts'
import { databaseState, periodsAt, periodsBefore, prefixOf } from './rebuild.ts'
import { REBUILD_SCRIPT } from './rebuild-script.ts'
import { readRowStates } from './row-states.ts'
import { RedisSettler } from './settle.ts'

const ADMIT = script(ADMIT_SCRIPT)
const EXTEND = script(EXTEND_SCRIPT)
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

export class RedisLimiter implements Limiter {
  private readonly redis: RedisConnection
  private readonly settler: RedisSettler
  private readonly rebuilding = new Map<number, Promise<void>>()

  constructor(private readonly opts: RedisLimiterOptions) {
    this.redis = new RedisConnection(opts)
    this.settler = new RedisSettler(this.redis, opts.log)
  }

  /** From the charge keys (charge-script.ts), read without a script: nothing is charged. */
  rowStates: Limiter['rowStates'] = async (q) => {
    let client: RedisClient
    try {
      client = await this.redis.connected()
    } catch {
      throw limiterUnavailable()
    }
    const at = this.opts.engineTime ? await this.redis.serverNow(client) : q.now
    return readRowStates(client, q, at, {
      spans: this.opts.windows,
      log: this.opts.log,
      // The account's requests are the admission log's.
      requests: (accountId) => this.windows(accountId, at, null, null),
    })
  }

  // Settling, sweeping and reconciling reservations: settle.ts.
  sweepReservations: Limiter['sweepReservations'] = (before) => this.settler.sweep(before)
  settle = (items: Settlement[]): Promise<void> => this.settler.settle(items)
  reconcile: NonNullable<Limiter['reconcile']> = (before) => this.settler.reconcile(before)

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
      JSON.stringify({ rows: q.rows, periods: periodsAt(q.now), before: periodsBefore(q.now) }),
      prefixOf(q.accountId),
      q.keyId,
      String(minuteMs),
      String(dayMs),
      String(this.opts.engineTime ? -1 : q.now),
    ]
    let reply: unknown
    try {
      const client = await this.redis.connected()
      reply = await this.redis.eval(client, EXTEND, args)
    } catch (err) {
      // Unreachable: nothing grows (the answer ends at what it holds), whatever `on_unavailable`.
      this.redis.noteDown(err)
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
      this.redis.noteDown(err)
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
    const client = await this.redis.connected()
    const now = this.opts.engineTime ? await this.redis.serverNow(client) : at
    const keep = Math.max(rpm === null ? 0 : minuteMs, rpd === null ? 0 : dayMs)
    const started = performance.now()
    const { history, state } = await databaseState(
      this.opts.log,
      this.opts.windows,
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
    this.redis.close()
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
    const client = await this.redis.connected()
    const reply = await this.redis.eval(client, ADMIT, args)
    this.redis.reachable()
    return reply as Reply
  }
}

const first = (v: number): number | null => (v < 0 ? null : v)

/** A failure of the database's side of a rebuild, kept apart from Redis's own (see `admit`). */
class FromDatabase extends Error {
  constructor(override readonly cause: unknown) {
    super('the database failed during a Redis rebuild')
  }
}
