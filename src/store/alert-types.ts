/**
 * @module
 * The alert deliveries queue (DESIGN §15): one row per (event, webhook), written off the request
 * path and sent by a worker of the serving process. Rows are claimed by moving their `nextAt`
 * forward (a lease) in one statement, so any number of senders — `--workers N`, replicas — share
 * the queue and each due row goes to one of them; a sender that dies mid-send leaves the row due
 * again when its lease ends (at least once; the event id deduplicates).
 */

export type DeliveryState = 'pending' | 'delivered' | 'failed'

export interface Delivery {
  /** The row's own number (pages and `deliveryTried`). */
  id: number
  /** The event's id, the same in every webhook's delivery of it (`evt_…`). */
  eventId: string
  event: string
  url: string
  /** The event's JSON document as it is signed and sent (format `json`). */
  body: string
  createdAt: number
  /** Epoch ms of the next try (pending), or of the lease's end while a sender holds it. */
  nextAt: number
  attempts: number
  state: DeliveryState
  lastStatus: number | null
  lastError: string | null
  /** When it was delivered or given up. */
  doneAt: number | null
}

export interface NewAlert {
  eventId: string
  event: string
  body: string
  /** One delivery per URL (the webhooks subscribed to `event`). */
  urls: string[]
  now: number
  /**
   * Once-only: when set, the alert is queued only if no alert with this mark ever was (a budget
   * threshold once per period). Written in the same transaction as the deliveries.
   */
  mark: string | null
}

export interface DeliveryTry {
  state: DeliveryState
  status: number | null
  error: string | null
  /** The next try (pending), else ignored. */
  nextAt: number
  now: number
}

export interface AlertStore {
  /** Queues the alert's deliveries; false when its mark was queued before (nothing written). */
  enqueueAlert(a: NewAlert): Promise<boolean>
  /** Claims up to `limit` pending deliveries due at `now`, leased until `now + leaseMs`. */
  claimDeliveries(now: number, leaseMs: number, limit: number): Promise<Delivery[]>
  /** Records one try of a claimed delivery (its attempts counted up). */
  deliveryTried(id: number, t: DeliveryTry): Promise<void>
  /** Newest first; `beforeId` = the last row of the previous page. */
  listDeliveries(q: { beforeId: number | null; limit: number }): Promise<Delivery[]>
  /**
   * Deletes up to `chunk` delivered or failed rows finished before `before`, and as many marks
   * made before it; returns how many went. Retention runs it with the hourly rollups' bound
   * (`usage.hourly_retention_days`), far past any budget period a mark stands for.
   */
  pruneAlerts(before: number, chunk: number): Promise<number>
}
