/**
 * @module
 * Group commit on PostgreSQL: admissions asked for in the same event-loop turn go to
 * `switchyard_admit_batch` together — one round trip, one transaction, one WAL flush — and each
 * caller is answered only after that commit, with its own result or its own error.
 *
 * A batch is bounded (bounded.ts), and may not commit once its callers have been told 503: the
 * statement checks, after the admissions and just before its commit, that the server's clock has
 * not passed the moment the client gives up (that moment carried over to the server's clock by
 * the offset seen on earlier batches), and otherwise fails, rolling every admission of the batch
 * back. So a server that stops with the batch in its socket and resumes later does not admit
 * requests that were answered `store_unavailable`. What is left: a stop between that check and
 * the commit itself (its WAL flush). Such an admission counts in its windows; its reservation
 * is released by the sweep.
 */
import type { SQL } from 'bun'
import type { WindowSpans } from '../../limits/types.ts'
import { num } from '../account-rows.ts'
import type { AdmitInput } from '../types.ts'
import { PAST_DEADLINE, type PgBound, pgBusy } from './bounded.ts'

export type AdmitRow = Record<string, unknown>

interface Pending {
  input: AdmitInput
  resolve(row: AdmitRow): void
  reject(err: unknown): void
}

/** How long an offset measurement is trusted before a looser, newer one replaces it. */
const OFFSET_TTL_MS = 60_000

export class AdmitBatcher {
  private pending: Pending[] = []
  /**
   * A lower bound of (server clock − this process's clock), ms: the server read its clock before
   * this process received the answer. The tightest of the last OFFSET_TTL_MS; null until measured.
   */
  private offset: { ms: number; at: number } | null = null

  constructor(
    private readonly db: PgBound,
    private readonly spans: WindowSpans,
    private readonly engineTime: boolean,
  ) {}

  admit(input: AdmitInput): Promise<AdmitRow> {
    return new Promise((resolve, reject) => {
      if (this.pending.push({ input, resolve, reject }) === 1) setImmediate(() => void this.flush())
    })
  }

  private async flush(): Promise<void> {
    const batch = this.pending
    this.pending = []
    if (!batch.length) return
    const items = batch.map(({ input: a }, i) => ({
      i,
      account: a.accountId,
      key: a.keyId,
      model: a.model,
      request: a.requestId,
      gateway: a.gatewayId,
      stream: a.stream,
      now: this.engineTime ? null : a.now,
      rpm: a.rpm,
      rpd: a.rpd,
      susp_max: a.suspension?.maxRejections ?? null,
      susp_window_ms: a.suspension?.windowMs ?? null,
      susp_ms: a.suspension?.durationMs ?? null,
      charge: a.charge ?? null,
    }))
    // When the client gives up (bounded.ts), on the server's clock; never later than that.
    const deadline = this.offset ? Date.now() + this.db.deadlineMs + this.offset.ms : null
    let rows: AdmitRow[]
    const started = performance.now()
    try {
      // The batch as one bound JSON parameter. The function's rows are materialised first (a
      // plpgsql set-returning function runs to its end on the first fetch), then each row's
      // o_server_now reads the clock and fails past the deadline (a text cast that is not
      // constant, so the planner cannot fold it away).
      rows = await this.db.run(
        (sql) => sql`
        WITH r AS MATERIALIZED (
          SELECT * FROM switchyard_admit_batch(${JSON.stringify(items)}::text::jsonb, ${this.spans.minuteMs}, ${this.spans.dayMs}))
        SELECT r.*, (CASE WHEN ${deadline}::BIGINT IS NULL
            OR (extract(epoch FROM clock_timestamp()) * 1000)::BIGINT <= ${deadline}::BIGINT
          THEN (extract(epoch FROM clock_timestamp()) * 1000)::BIGINT::TEXT
          ELSE ${PAST_DEADLINE} END)::BIGINT AS o_server_now
        FROM r`,
      )
      if (rows.length) this.noteOffset(num(rows[0]!.o_server_now) - Date.now())
    } catch (err) {
      for (const p of batch) p.reject(err)
      return
    }
    const waitedMs = performance.now() - started
    for (const row of rows) {
      const p = batch[Number(row.o_index)]!
      if (row.o_error === null) p.resolve(row)
      else p.reject(itemError(String(row.o_error), waitedMs))
    }
  }

  private noteOffset(ms: number): void {
    const now = Date.now()
    if (!this.offset || ms >= this.offset.ms || now - this.offset.at > OFFSET_TTL_MS)
      this.offset = { ms, at: now }
  }

  /** Measures the offset once before the first batch, so that one is checked too. */
  async measureOffset(): Promise<void> {
    this.noteOffset((await this.db.run(serverNow)) - Date.now())
  }
}

/**
 * One admission's failure, as `switchyard_admit_batch` (v15) reports it: its SQLSTATE, a space,
 * the server's message. A conflict (a deadlock, a serialization failure) or a lock refused is
 * `StoreBusyError`, as for a whole call (`pgBusy`); anything else an error naming its SQLSTATE.
 */
function itemError(reported: string, waitedMs: number): Error {
  const m = /^([0-9A-Z]{5}) ([\s\S]*)$/.exec(reported)
  if (!m) return new Error(reported)
  const state = m[1]!
  const message = m[2]!
  return (
    pgBusy(state, message, waitedMs, 'the admission') ??
    Object.assign(new Error(`${message} (SQLSTATE ${state})`), { errno: state })
  )
}

/** The database server's clock, in ms since the epoch. */
export async function serverNow(sql: SQL): Promise<number> {
  const [r] = await sql`SELECT (extract(epoch FROM clock_timestamp()) * 1000)::BIGINT AS now`
  return num(r.now)
}
