/**
 * @module
 * Settling the Redis limiter's reservations: each once (the settle script deletes its `res`
 * entry, so a retry settles nothing twice), after the outcomes are in the database; the sweep of
 * those whose replica died mid-request; and the reconciliation of what Redis still holds for
 * requests the database calls settled, or never admitted.
 */
import type { RedisClient } from 'bun'
import type { Settlement } from '../../limits/types.ts'
import { SettlementPendingError } from '../errors.ts'
import type { AdmissionLog } from '../types.ts'
import { SETTLE_SCRIPT } from './charge-script.ts'
import { type RedisConnection, script, withTimeout } from './connection.ts'
import { prefixOf } from './rebuild.ts'

const SETTLE = script(SETTLE_SCRIPT)
/** The settle script's answers (charge-script.ts): the hold released now; settled before; none in Redis. */
const RELEASED = 1
const UNHELD = 2

export class RedisSettler {
  constructor(
    private readonly redis: RedisConnection,
    private readonly log: Pick<AdmissionLog, 'unsettled' | 'markSettled' | 'admissionsByHandle'>,
  ) {}

  /**
   * Reservations the database's admission log still calls unsettled past `before` (their replica
   * died mid-request): each settled to itself, the most it could have cost (the upstream may have
   * answered it in full), here, then in the log. Returns how many this call settled: a hold it
   * released in Redis, or — where Redis holds none of the account's state (lost, not rebuilt yet)
   * and the row is the hold — a row it marked. Between the two steps Redis has released a hold the
   * log still calls unsettled; a sweep run then (another replica's) reads it, releases nothing
   * and counts nothing (the settle script deletes each hold once).
   */
  async sweep(before: number): Promise<number> {
    const stale = await this.log.unsettled(before, 1000)
    if (!stale.length) return 0
    // Negative: as reserved (the settle script reads the reservation it holds).
    const settlements = stale.map((r) => ({
      handle: r.gatewayId,
      accountId: r.accountId,
      tokens: -1,
      micros: -1,
    }))
    const settled = await this.settleAll(settlements)
    const marked = new Set(await this.log.markSettled(settlements))
    // An admission may have rebuilt the account from the database between the two steps, while
    // these rows still read unsettled: their holds are back in Redis. Released here, once (a
    // hold not there answers 0 or 2 and moves nothing), so `reconcile` finds none to count again.
    const rebuilt = settlements.filter((s, i) => settled[i] === UNHELD && marked.has(s.handle as string))
    if (rebuilt.length) await this.settleAll(rebuilt)
    return stale.filter(
      (r, i) => settled[i] === RELEASED || (settled[i] === UNHELD && marked.has(r.gatewayId)),
    ).length
  }

  /** Settles each reservation once (the settle script), after the outcomes are in the database. */
  async settle(items: Settlement[]): Promise<void> {
    await this.settleAll(items)
  }

  /** What the settle script answered for each of `items`, in order (1 released, 0 settled before, 2 unheld). */
  private async settleAll(items: Settlement[]): Promise<number[]> {
    if (!items.length) return []
    try {
      const client = await this.redis.connected()
      // Each handle settles on its own and at most once: sent together, the client pipelines them.
      return await Promise.all(items.map((s) => this.settleOne(client, s)))
    } catch (err) {
      // The outcomes are in the database already; the batch is retried until Redis settles.
      throw new SettlementPendingError(`redis settlement failed: ${(err as Error)?.message ?? String(err)}`)
    }
  }

  /** Once per handle (the script deletes its `res` entry): a retry settles nothing twice. */
  private async settleOne(client: RedisClient, s: Settlement): Promise<number> {
    const pre = prefixOf(s.accountId)
    const args = ['2', `${pre}res`, `${pre}built`, s.handle as string, String(s.tokens), String(s.micros)]
    return Number(await this.redis.eval(client, SETTLE, args))
  }

  /**
   * Reservations Redis still holds, made before `before`, that the database calls settled (their
   * Redis settlement was lost with the process that owed it, or rebuilt from rows read before it
   * settled) or never admitted (its admission row was never written): each settled to what the
   * database says, or to nothing. The ones the database calls unsettled are `sweepReservations`'.
   */
  async reconcile(before: number): Promise<number> {
    const client = await this.redis.connected()
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
        const rows = await this.log.admissionsByHandle(old.map(([h]) => h))
        for (const [handle] of old) {
          const row = rows.get(handle)
          if (row && !row.settled) continue
          const s = { handle, accountId, tokens: row?.tokens ?? 0, micros: row?.micros ?? 0 }
          if ((await this.settleOne(client, s as Settlement)) === RELEASED) released++
        }
      }
    } while (cursor !== '0')
    return released
  }
}
