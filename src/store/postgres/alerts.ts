/**
 * @module
 * The alert deliveries queue on PostgreSQL (store/alert-types.ts), the same contract as
 * `sqlite/alerts.ts`. Every value is bound (tagged templates).
 */
import type { SQL } from 'bun'
import { num, numOrNull } from '../account-rows.ts'
import type { AlertStore, Delivery, DeliveryState, DeliveryTry, NewAlert } from '../alert-types.ts'
import type { PgBound } from './bounded.ts'

function toDelivery(r: Record<string, unknown>): Delivery {
  return {
    id: num(r.id),
    eventId: String(r.event_id),
    event: String(r.event),
    url: String(r.url),
    body: String(r.body),
    createdAt: num(r.created_at),
    nextAt: num(r.next_at),
    attempts: num(r.attempts),
    state: String(r.state) as DeliveryState,
    lastStatus: numOrNull(r.last_status),
    lastError: r.last_error === null ? null : String(r.last_error),
    doneAt: numOrNull(r.done_at),
  }
}

export class PgAlerts implements AlertStore {
  constructor(private readonly db: PgBound) {}

  enqueueAlert(a: NewAlert): Promise<boolean> {
    return this.db.run((pool) =>
      pool.begin(async (sql: SQL) => {
        if (a.mark !== null) {
          const marked = await sql`
            INSERT INTO alert_marks (mark, created_at) VALUES (${a.mark}, ${a.now}) ON CONFLICT (mark) DO NOTHING`
          if (marked.count === 0) return false
        }
        for (const url of a.urls)
          await sql`
            INSERT INTO alert_deliveries (event_id, event, url, body, created_at, next_at)
            VALUES (${a.eventId}, ${a.event}, ${url}, ${a.body}, ${a.now}, ${a.now})
            ON CONFLICT (event_id, url) DO NOTHING`
        return true
      }),
    )
  }

  async claimDeliveries(now: number, leaseMs: number, limit: number): Promise<Delivery[]> {
    const rows = await this.db.run(
      (sql) => sql`
      UPDATE alert_deliveries SET next_at = ${now + leaseMs} WHERE id IN
        (SELECT id FROM alert_deliveries WHERE state = 'pending' AND next_at <= ${now}
         ORDER BY next_at LIMIT ${limit} FOR UPDATE SKIP LOCKED)
      RETURNING *`,
    )
    return rows.map(toDelivery)
  }

  async deliveryTried(id: number, t: DeliveryTry): Promise<void> {
    const done = t.state === 'pending' ? null : t.now
    await this.db.run(
      (sql) => sql`
      UPDATE alert_deliveries SET attempts = attempts + 1, state = ${t.state}, last_status = ${t.status},
        last_error = ${t.error}, next_at = ${t.nextAt}, done_at = ${done} WHERE id = ${id}`,
    )
  }

  async pruneAlerts(before: number, chunk: number): Promise<number> {
    const done = await this.db.run(
      (sql) => sql`
      DELETE FROM alert_deliveries WHERE id IN (SELECT id FROM alert_deliveries
        WHERE state != 'pending' AND done_at < ${before} LIMIT ${chunk})`,
    )
    const marks = await this.db.run(
      (sql) => sql`
      DELETE FROM alert_marks WHERE mark IN (SELECT mark FROM alert_marks WHERE created_at < ${before} LIMIT ${chunk})`,
    )
    return done.count + marks.count
  }

  async listDeliveries(q: { beforeId: number | null; limit: number }): Promise<Delivery[]> {
    const before = q.beforeId ?? Number.MAX_SAFE_INTEGER
    const rows = await this.db.run(
      (sql) => sql`SELECT * FROM alert_deliveries WHERE id < ${before} ORDER BY id DESC LIMIT ${q.limit}`,
    )
    return rows.map(toDelivery)
  }
}
