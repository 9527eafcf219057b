/**
 * @module
 * The alert deliveries queue on SQLite (store/alert-types.ts). A claim is one UPDATE … RETURNING
 * under the write lock: two processes on one file never claim the same row.
 */
import type { Database } from 'bun:sqlite'
import type { AlertStore, Delivery, DeliveryTry, NewAlert } from '../alert-types.ts'
import type { SqliteGuard } from './guard.ts'

const COLUMNS = `id, event_id AS eventId, event, url, body, created_at AS createdAt, next_at AS nextAt,
  attempts, state, last_status AS lastStatus, last_error AS lastError, done_at AS doneAt`

export class SqliteAlerts implements AlertStore {
  private readonly q
  private readonly enqueue: (a: NewAlert) => boolean
  private readonly claim: (now: number, leaseMs: number, limit: number) => Delivery[]

  constructor(
    db: Database,
    private readonly guard: SqliteGuard,
  ) {
    this.q = {
      mark: db.query<null, { $mark: string; $now: number }>(
        'INSERT INTO alert_marks (mark, created_at) VALUES ($mark, $now) ON CONFLICT (mark) DO NOTHING',
      ),
      add: db.query<null, { $eid: string; $event: string; $url: string; $body: string; $now: number }>(
        `INSERT INTO alert_deliveries (event_id, event, url, body, created_at, next_at)
         VALUES ($eid, $event, $url, $body, $now, $now) ON CONFLICT (event_id, url) DO NOTHING`,
      ),
      due: db.query<{ one: number }, { $now: number }>(
        `SELECT 1 AS one FROM alert_deliveries WHERE state = 'pending' AND next_at <= $now LIMIT 1`,
      ),
      claim: db.query<Delivery, { $now: number; $until: number; $limit: number }>(
        `UPDATE alert_deliveries SET next_at = $until WHERE id IN
           (SELECT id FROM alert_deliveries WHERE state = 'pending' AND next_at <= $now ORDER BY next_at LIMIT $limit)
         RETURNING ${COLUMNS}`,
      ),
      tried: db.query<
        null,
        {
          $id: number
          $state: string
          $status: number | null
          $error: string | null
          $next: number
          $done: number | null
        }
      >(
        `UPDATE alert_deliveries SET attempts = attempts + 1, state = $state, last_status = $status,
           last_error = $error, next_at = $next, done_at = $done WHERE id = $id`,
      ),
      pruneDone: db.query<null, { $before: number; $chunk: number }>(
        `DELETE FROM alert_deliveries WHERE id IN (SELECT id FROM alert_deliveries
           WHERE state != 'pending' AND done_at < $before LIMIT $chunk)`,
      ),
      pruneMarks: db.query<null, { $before: number; $chunk: number }>(
        `DELETE FROM alert_marks WHERE mark IN (SELECT mark FROM alert_marks WHERE created_at < $before LIMIT $chunk)`,
      ),
      list: db.query<Delivery, { $before: number; $limit: number }>(
        `SELECT ${COLUMNS} FROM alert_deliveries WHERE id < $before ORDER BY id DESC LIMIT $limit`,
      ),
    }
    this.enqueue = db.transaction((a: NewAlert) => {
      if (a.mark !== null && this.q.mark.run({ $mark: a.mark, $now: a.now }).changes === 0) return false
      for (const url of a.urls)
        this.q.add.run({ $eid: a.eventId, $event: a.event, $url: url, $body: a.body, $now: a.now })
      return true
    }).immediate as never
    this.claim = (now, leaseMs, limit) =>
      this.q.claim.all({ $now: now, $until: now + leaseMs, $limit: limit })
  }

  enqueueAlert(a: NewAlert) {
    return this.guard.write(() => this.enqueue(a))
  }

  /**
   * Every sender polls this (each process, every `alerts.poll_ms`): an idle poll only reads, so it
   * neither takes the file's write lock from admissions nor waits on it; a due row is claimed under
   * it. Whether any row is due is a read of the partial index `alert_deliveries_due`.
   */
  async claimDeliveries(now: number, leaseMs: number, limit: number) {
    if (!(await this.guard.read(() => this.q.due.get({ $now: now }) !== null))) return []
    return this.guard.write(() => this.claim(now, leaseMs, limit))
  }

  deliveryTried(id: number, t: DeliveryTry) {
    return this.guard.write(() => {
      this.q.tried.run({
        $id: id,
        $state: t.state,
        $status: t.status,
        $error: t.error,
        $next: t.nextAt,
        $done: t.state === 'pending' ? null : t.now,
      })
    })
  }

  pruneAlerts(before: number, chunk: number) {
    const q = { $before: before, $chunk: chunk }
    return this.guard.write(() => this.q.pruneDone.run(q).changes + this.q.pruneMarks.run(q).changes)
  }

  listDeliveries(q: { beforeId: number | null; limit: number }) {
    return this.guard.read(() =>
      this.q.list.all({ $before: q.beforeId ?? Number.MAX_SAFE_INTEGER, $limit: q.limit }),
    )
  }
}
