/**
 * @module
 * The limiter on PostgreSQL: one call of `switchyard_admit` (see migrations.ts) per admission —
 * one round trip, one transaction, the account row locked until commit, so N replicas admit
 * exactly what one process would.
 */
import type { SQL } from 'bun'
import type { WindowSpans } from '../../limits/types.ts'
import { consumed, windowOf } from '../../limits/windows.ts'
import type { AdmitInput, AdmitResult, Limiter } from '../types.ts'
import { num, numOrNull } from './accounts.ts'

export class PgLimiter implements Limiter {
  constructor(
    private readonly sql: SQL,
    private readonly spans: WindowSpans,
    /** Use the database server's clock (replicas then share one clock) instead of `input.now`. */
    private readonly engineTime: boolean,
  ) {}

  async admit(input: AdmitInput): Promise<AdmitResult> {
    const s = input.suspension
    const [r] = await this.sql`
      SELECT * FROM switchyard_admit(${input.accountId}, ${input.keyId}, ${input.model}, ${input.requestId},
        ${input.stream}, ${this.engineTime ? null : input.now}, ${input.rpm}, ${input.rpd},
        ${this.spans.minuteMs}, ${this.spans.dayMs}, ${s?.maxRejections ?? null}, ${s?.windowMs ?? null},
        ${s?.durationMs ?? null})`
    const at = num(r.o_at)
    const minute = windowOf(input.rpm, num(r.o_minute_used), numOrNull(r.o_minute_first), this.spans.minuteMs)
    const day = windowOf(input.rpd, num(r.o_day_used), numOrNull(r.o_day_first), this.spans.dayMs)
    if (!r.o_admitted) {
      return {
        admitted: false,
        at,
        window: r.o_window as 'minute' | 'day',
        retryAt: num(r.o_retry_at),
        minute,
        day,
        suspendedUntil: numOrNull(r.o_suspended_until),
      }
    }
    return {
      admitted: true,
      at,
      usageId: num(r.o_usage_id),
      minute: consumed(minute, at, this.spans.minuteMs),
      day: consumed(day, at, this.spans.dayMs),
    }
  }

  async windows(accountId: number, now: number, rpm: number | null, rpd: number | null) {
    const at = this.engineTime ? await this.serverNow() : now
    const [minute, day] = await Promise.all([
      this.window(accountId, at, this.spans.minuteMs, rpm),
      this.window(accountId, at, this.spans.dayMs, rpd),
    ])
    return { minute, day }
  }

  close(): void {}

  private async serverNow(): Promise<number> {
    const [r] = await this.sql`SELECT (extract(epoch FROM clock_timestamp()) * 1000)::BIGINT AS now`
    return num(r.now)
  }

  private async window(accountId: number, now: number, span: number, limit: number | null) {
    const rows = await this.sql`
      SELECT a.admit_seq - f.seq + 1 AS used, f.created_at AS first FROM accounts a
      CROSS JOIN LATERAL (
        SELECT r.seq, r.created_at FROM requests r
        WHERE r.account_id = a.id AND r.created_at > ${now - span} AND r.seq IS NOT NULL
        ORDER BY r.created_at, r.seq LIMIT 1) f
      WHERE a.id = ${accountId}`
    const r = rows[0]
    return windowOf(limit, r ? num(r.used) : 0, r ? num(r.first) : null, span)
  }
}
