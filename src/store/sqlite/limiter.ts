/**
 * @module
 * Exact rolling-window rate limiting on the request log. Check and consume run in one
 * `BEGIN IMMEDIATE` transaction, so concurrent requests — in this process or in any other
 * process sharing the database file — are serialised by SQLite's write lock and a window
 * never admits more than its limit. Cost is O(requests in the window) index entries.
 */
import type { Database } from 'bun:sqlite'
import type { AdmitInput, AdmitResult, WindowLimit } from '../types.ts'

/** Window lengths; 60 s and 24 h unless the operator shortens them (tests do). */
export interface WindowSpans {
  minuteMs: number
  dayMs: number
}

export const DEFAULT_SPANS: WindowSpans = { minuteMs: 60_000, dayMs: 86_400_000 }

export class LimiterQueries {
  private readonly q
  private readonly admitTx: (input: AdmitInput) => AdmitResult

  constructor(
    db: Database,
    private readonly spans: WindowSpans = DEFAULT_SPANS,
  ) {
    this.q = {
      window: db.query<{ n: number; oldest: number | null }, [number, number]>(
        'SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM requests WHERE account_id = ? AND created_at > ?',
      ),
      nth: db.query<{ created_at: number }, [number, number, number]>(
        'SELECT created_at FROM requests WHERE account_id = ? AND created_at > ? ORDER BY created_at LIMIT 1 OFFSET ?',
      ),
      insert: db.query<null, [string, number, string, string, number, number]>(
        'INSERT INTO requests (request_id, account_id, key_id, model, stream, created_at) VALUES (?, ?, ?, ?, ?, ?)',
      ),
      reject: db.query<null, [string, number]>(
        'INSERT INTO limit_rejections (key_id, created_at) VALUES (?, ?)',
      ),
      rejections: db.query<{ n: number }, [string, number]>(
        'SELECT COUNT(*) AS n FROM limit_rejections WHERE key_id = ? AND created_at > ?',
      ),
      clearRejections: db.query<null, [string]>('DELETE FROM limit_rejections WHERE key_id = ?'),
      suspend: db.query<null, [number, string]>('UPDATE api_keys SET suspended_until = ? WHERE id = ?'),
    }
    this.admitTx = db.transaction((input: AdmitInput) => this.admitLocked(input)).immediate as never
  }

  admit(input: AdmitInput): AdmitResult {
    return this.admitTx(input)
  }

  windows(accountId: number, now: number, rpm: number | null, rpd: number | null) {
    return {
      minute: this.window(accountId, now, this.spans.minuteMs, rpm),
      day: this.window(accountId, now, this.spans.dayMs, rpd),
    }
  }

  private window(accountId: number, now: number, span: number, limit: number | null): WindowLimit {
    const row = this.q.window.get(accountId, now - span)!
    return {
      limit,
      used: row.n,
      remaining: limit === null ? null : Math.max(0, limit - row.n),
      resetAt: row.oldest === null ? null : row.oldest + span,
    }
  }

  /** Runs inside the write transaction. */
  private admitLocked(input: AdmitInput): AdmitResult {
    const { accountId, now, rpm, rpd } = input
    const { minuteMs, dayMs } = this.spans
    // An unlimited window is not counted on the hot path; its `used` is reported by windows().
    const minute = rpm === null ? unlimited() : this.window(accountId, now, minuteMs, rpm)
    const day = rpd === null ? unlimited() : this.window(accountId, now, dayMs, rpd)
    const full =
      rpm !== null && minute.used >= rpm ? 'minute' : rpd !== null && day.used >= rpd ? 'day' : null
    if (full) {
      const span = full === 'minute' ? minuteMs : dayMs
      const w = full === 'minute' ? minute : day
      // The window admits again once (used - limit + 1) requests have left it.
      const freeing = this.q.nth.get(accountId, now - span, w.used - w.limit!)!
      const retryAt = freeing.created_at + span
      return {
        admitted: false,
        window: full,
        retryAt,
        minute,
        day,
        suspendedUntil: this.noteRejection(input),
      }
    }
    const res = this.q.insert.run(
      input.requestId,
      accountId,
      input.keyId,
      input.model,
      input.stream ? 1 : 0,
      now,
    )
    return {
      admitted: true,
      usageId: Number(res.lastInsertRowid),
      minute: consumed(minute, now, minuteMs),
      day: consumed(day, now, dayMs),
    }
  }

  private noteRejection(input: AdmitInput): number | null {
    const s = input.suspension
    if (!s) return null
    this.q.reject.run(input.keyId, input.now)
    const { n } = this.q.rejections.get(input.keyId, input.now - s.windowMs)!
    if (n <= s.maxRejections) return null
    const until = input.now + s.durationMs
    this.q.suspend.run(until, input.keyId)
    this.q.clearRejections.run(input.keyId)
    return until
  }
}

function unlimited(): WindowLimit {
  return { limit: null, used: 0, remaining: null, resetAt: null }
}

function consumed(w: WindowLimit, now: number, span: number): WindowLimit {
  if (w.limit === null) return w
  return {
    limit: w.limit,
    used: w.used + 1,
    remaining: w.limit - w.used - 1,
    resetAt: w.resetAt ?? now + span,
  }
}
