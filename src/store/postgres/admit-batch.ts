/**
 * @module
 * Group commit on PostgreSQL: admissions asked for in the same event-loop turn go to
 * `switchyard_admit_many` together — one round trip, one transaction, one WAL flush — and each
 * caller is answered only after that commit, with its own result or its own error.
 */
import type { SQL } from 'bun'
import type { WindowSpans } from '../../limits/types.ts'
import type { AdmitInput } from '../types.ts'

export type AdmitRow = Record<string, unknown>

interface Pending {
  input: AdmitInput
  resolve(row: AdmitRow): void
  reject(err: unknown): void
}

export class AdmitBatcher {
  private pending: Pending[] = []

  constructor(
    private readonly sql: SQL,
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
    let rows: AdmitRow[]
    try {
      // The batch as one bound JSON parameter.
      rows = await this.sql`
        SELECT * FROM switchyard_admit_batch(${JSON.stringify(items)}::text::jsonb, ${this.spans.minuteMs}, ${this.spans.dayMs})`
    } catch (err) {
      for (const p of batch) p.reject(err)
      return
    }
    for (const row of rows) {
      const p = batch[Number(row.o_index)]!
      if (row.o_error === null) p.resolve(row)
      else p.reject(new Error(String(row.o_error)))
    }
  }
}
