/**
 * @module
 * What an account's reservations in flight hold in Redis, read without a script (nothing is
 * charged): `Limiter.rowStates` tells settled use apart from them (DESIGN §11, one ledger).
 */
import type { RedisClient } from 'bun'

/** An unsettled reservation as the charge script keeps it in `res` (charge-script.ts). */
export interface HeldCharge {
  /** Tokens and micro-dollars it holds. */
  t: number
  m: number
  /** The token windows (their base keys) and spend counters it charged. */
  w: string[]
  s: string[]
  at: number
}

/** The account's reservations in flight: its `res` hash, each settled one deleted from it. */
export async function heldCharges(client: RedisClient, pre: string): Promise<HeldCharge[]> {
  const reply = (await client.send('HGETALL', [`${pre}res`])) as unknown
  // A flat [field, value, ...] list (RESP2) or a map (RESP3), as the client's protocol returns it.
  const values = Array.isArray(reply)
    ? reply.filter((_, i) => i % 2 === 1)
    : Object.values((reply ?? {}) as Record<string, unknown>)
  return values.map((v) => {
    const r = JSON.parse(String(v)) as Partial<HeldCharge>
    // cjson encodes an empty table as {}: no windows or counters.
    const list = (x: unknown) => (Array.isArray(x) ? x.map(String) : [])
    return { t: Number(r.t ?? 0), m: Number(r.m ?? 0), w: list(r.w), s: list(r.s), at: Number(r.at ?? 0) }
  })
}
