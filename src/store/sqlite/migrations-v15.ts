/**
 * @module
 * SQLite schema v15: the alert deliveries queue and the marks of alerts sent once per period
 * (store/alert-types.ts). `alert_deliveries_due` holds pending rows only: a claim reads the
 * oldest due ones without passing over the delivered history.
 */
export const ALERTS_V15 = `
CREATE TABLE alert_deliveries (
  id INTEGER PRIMARY KEY,
  event_id TEXT NOT NULL,
  event TEXT NOT NULL,
  url TEXT NOT NULL,
  body TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  next_at INTEGER NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
  last_status INTEGER,
  last_error TEXT,
  done_at INTEGER,
  UNIQUE (event_id, url)
);
CREATE INDEX alert_deliveries_due ON alert_deliveries(next_at) WHERE state = 'pending';
CREATE TABLE alert_marks (mark TEXT PRIMARY KEY, created_at INTEGER NOT NULL);
`
