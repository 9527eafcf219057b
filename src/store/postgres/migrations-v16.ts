/**
 * @module
 * PostgreSQL schema v16: the alert deliveries queue and the marks of alerts sent once per period,
 * as SQLite's v15 (store/alert-types.ts). Senders claim rows with `FOR UPDATE SKIP LOCKED`, so
 * replicas sending at once each take other rows.
 */
export const ALERTS_V16 = `
CREATE TABLE alert_deliveries (
  id BIGSERIAL PRIMARY KEY,
  event_id TEXT NOT NULL,
  event TEXT NOT NULL,
  url TEXT NOT NULL,
  body TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  next_at BIGINT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
  last_status INTEGER,
  last_error TEXT,
  done_at BIGINT,
  UNIQUE (event_id, url)
);
CREATE INDEX alert_deliveries_due ON alert_deliveries(next_at) WHERE state = 'pending';
CREATE TABLE alert_marks (mark TEXT PRIMARY KEY, created_at BIGINT NOT NULL);
`
