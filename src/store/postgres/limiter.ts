/**
 * @module
 * The limiter on PostgreSQL: `switchyard_admit` (see migrations.ts) per admission, the account
 * row locked until commit, so N replicas admit exactly what one process would; admissions of one
 * event-loop turn share one transaction (admit-batch.ts).
 */
import type { SQL } from 'bun'
import {
  type ChargeDecision,
  chargeOutcome,
  type ExtendDecision,
  extendOutcome,
} from '../../limits/charge-result.ts'
import type { LimitRow } from '../../limits/rows.ts'
import type { Extended, Extension, WindowSpans } from '../../limits/types.ts'
import { consumed, windowOf } from '../../limits/windows.ts'
import { num, numOrNull } from '../account-rows.ts'
import type { AdmitInput, AdmitResult, Limiter, Refusal } from '../types.ts'
import { AdmitBatcher, serverNow } from './admit-batch.ts'
import type { PgBound } from './bounded.ts'
import { PgCharges } from './charges.ts'

export class PgLimiter implements Limiter {
  private readonly batcher: AdmitBatcher
  private readonly charges: PgCharges

  constructor(
    private readonly db: PgBound,
    private readonly spans: WindowSpans,
    /** Use the database server's clock (replicas then share one clock) instead of `input.now`. */
    private readonly engineTime: boolean,
  ) {
    this.batcher = new AdmitBatcher(db, spans, engineTime)
    this.charges = new PgCharges(spans)
  }

  async admit(input: AdmitInput): Promise<AdmitResult> {
    const r = await this.batcher.admit(input)
    const at = num(r.o_at)
    const minute = windowOf(input.rpm, num(r.o_minute_used), numOrNull(r.o_minute_first), this.spans.minuteMs)
    const day = windowOf(input.rpd, num(r.o_day_used), numOrNull(r.o_day_first), this.spans.dayMs)
    const charged =
      input.charge && r.o_charge
        ? chargeOutcome(input.charge, r.o_charge as ChargeDecision, at, this.spans, input.gatewayId)
        : null
    if (!r.o_admitted) {
      return {
        admitted: false,
        at,
        window: r.o_window as 'minute' | 'day',
        retryAt: num(r.o_retry_at),
        minute,
        day,
        suspendedUntil: numOrNull(r.o_suspended_until),
        ...(charged && 'refusal' in charged ? { charge: charged.refusal } : {}),
      }
    }
    return {
      admitted: true,
      at,
      gatewayId: input.gatewayId,
      minute: consumed(minute, at, this.spans.minuteMs),
      day: consumed(day, at, this.spans.dayMs),
      ...(charged && 'reservation' in charged ? { reservation: charged.reservation } : {}),
    }
  }

  /** `switchyard_extend` (migrations-v17.ts): one statement, under the account's lock. */
  async extend(q: Extension): Promise<Extended> {
    const [r] = await this.db.run(
      (sql) => sql`
      SELECT switchyard_extend(${q.handle as string}, ${JSON.stringify(q.rows)}::text::jsonb, ${q.tokens}::BIGINT,
        ${q.micros}::BIGINT, ${this.engineTime ? null : q.now}::BIGINT, ${this.spans.minuteMs}::BIGINT,
        ${this.spans.dayMs}::BIGINT) AS d`,
    )
    const d = r.d as ExtendDecision & { at?: number | string }
    return extendOutcome(q, d, d.at === undefined ? q.now : Number(d.at), this.spans)
  }

  /** `switchyard_admit`'s refusal count (fixed windows per key), as one statement. */
  async countRejection(r: Refusal): Promise<number | null> {
    const { maxRejections: max, windowMs, durationMs } = r.suspension
    const rows = await this.db.run(
      (sql) => sql`
      WITH t AS (
        SELECT COALESCE(${this.engineTime ? null : r.now}::BIGINT,
          (extract(epoch FROM clock_timestamp()) * 1000)::BIGINT) AS now),
      b AS (
        SELECT k.id, t.now,
          CASE WHEN k.rejections_since IS NULL OR k.rejections_since <= t.now - ${windowMs}
               THEN 1 ELSE k.rejections + 1 END AS n,
          CASE WHEN k.rejections_since IS NULL OR k.rejections_since <= t.now - ${windowMs}
               THEN t.now ELSE k.rejections_since END AS since
        FROM api_keys k CROSS JOIN t WHERE k.id = ${r.keyId} FOR UPDATE OF k)
      UPDATE api_keys k SET
        rejections = CASE WHEN b.n > ${max} THEN 0 ELSE b.n END,
        rejections_since = CASE WHEN b.n > ${max} THEN NULL ELSE b.since END,
        suspended_until = CASE WHEN b.n > ${max} THEN b.now + ${durationMs} ELSE k.suspended_until END
      FROM b WHERE k.id = b.id
      RETURNING CASE WHEN b.n > ${max} THEN b.now + ${durationMs} END AS until`,
    )
    return numOrNull(rows[0]?.until)
  }

  async windows(accountId: number, now: number, rpm: number | null, rpd: number | null) {
    return this.db.run(async (sql) => {
      const at = this.engineTime ? await serverNow(sql) : now
      const [minute, day] = await Promise.all([
        this.window(sql, accountId, at, this.spans.minuteMs, rpm),
        this.window(sql, accountId, at, this.spans.dayMs, rpd),
      ])
      return { minute, day }
    })
  }

  async rowStates(q: { accountId: number; keyId: string | null; now: number; rows: LimitRow[] }) {
    return this.db.run(async (sql) => {
      const at = this.engineTime ? await serverNow(sql) : q.now
      return this.charges.rowStates(sql, q.accountId, q.keyId, at, q.rows)
    })
  }

  /** `switchyard_sweep` (migrations-v12.ts), in chunks of 1,000. */
  async sweepReservations(before: number): Promise<number> {
    const [r] = await this.db.run((sql) => sql`SELECT switchyard_sweep(${before}, 1000) AS n`)
    return num(r.n)
  }

  /** Reads the server's clock once, so even the first admission batch is checked (admit-batch.ts). */
  measureClock(): Promise<void> {
    return this.batcher.measureOffset()
  }

  close(): void {}

  private async window(sql: SQL, accountId: number, now: number, span: number, limit: number | null) {
    const rows = await sql`
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
