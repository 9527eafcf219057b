/**
 * @module
 * Admissions in Redis (`limits.redis_url`): one script per admission (admit-script.ts), while
 * the database keeps accounts and usage. An admitted request's usage row is written to the
 * database before the request goes upstream, so a replica killed mid-request loses no record.
 *
 * Unreachable Redis fails closed by default: 503 `limiter_unavailable` with `retry-after`
 * (`limits.on_unavailable: allow` serves without limits instead, and still records usage).
 */
import { RedisClient } from 'bun'
import type { WindowSpans } from '../../limits/types.ts'
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

/** A command that takes longer than this counts as Redis being unreachable. */
const COMMAND_TIMEOUT_MS = 2000
const CONNECT_TIMEOUT_MS = 1000
const SCRIPT_SHA = new Bun.CryptoHasher('sha1').update(ADMIT_SCRIPT).digest('hex')

export interface RedisLimiterOptions {
  url: string
  windows: WindowSpans
  onUnavailable: 'reject' | 'allow'
  /** Decide on the Redis server's clock (production); false = the caller's `now` (tests). */
  engineTime: boolean
  log: AdmissionLog
  accounts: Pick<AccountStore, 'setKeySuspended'>
  /** Token and money use, kept in the database beside the admission log. */
  states: Pick<Limiter, 'rowStates'>
  warn(message: string, fields?: Record<string, unknown>): void
}

/** The keys of one account, hash-tagged so Redis Cluster keeps them in one slot. */
export function accountKeys(accountId: number, keyId: string): [string, string, string] {
  const tag = `{acct:${accountId}}`
  return [`sy:${tag}:log`, `sy:${tag}:seq`, `sy:${tag}:rej:${keyId}`]
}

type Reply = [number, string, number, number, number, number, number, number, number]

export class RedisLimiter implements Limiter {
  private client: RedisClient | null = null
  private connecting: Promise<RedisClient> | null = null
  private down = false

  constructor(private readonly opts: RedisLimiterOptions) {}

  rowStates: Limiter['rowStates'] = (q) => this.opts.states.rowStates(q)
  /** Reservations are not made under Redis yet (admission charges no token or money rows). */
  sweepReservations: Limiter['sweepReservations'] = async () => 0

  async admit(input: AdmitInput): Promise<AdmitResult> {
    const { minuteMs, dayMs } = this.opts.windows
    let r: Reply
    try {
      r = await this.run(input.accountId, input.keyId, input, 'admit')
    } catch (err) {
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
    const at = r[3]
    const minute = windowOf(input.rpm, r[4], first(r[5]), minuteMs)
    const day = windowOf(input.rpd, r[6], first(r[7]), dayMs)
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
      }
    }
    // Recorded before the caller goes upstream: every admitted request has its usage row.
    await this.opts.log.recordAdmitted(input, at)
    return {
      admitted: true,
      at,
      gatewayId: input.gatewayId,
      minute: consumed(minute, at, minuteMs),
      day: consumed(day, at, dayMs),
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
    } catch {
      throw limiterUnavailable()
    }
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

  close(): void {
    this.client?.close()
    this.client = null
  }

  private async run(
    accountId: number,
    keyId: string,
    input: Pick<AdmitInput, 'now' | 'rpm' | 'rpd' | 'suspension'>,
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
