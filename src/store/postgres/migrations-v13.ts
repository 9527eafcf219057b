/**
 * @module
 * PostgreSQL schema v13: refusals before admission, per key, code and UTC hour (`refusals.ts`),
 * as SQLite's v11.
 */

export const REFUSALS_V13 = `
CREATE TABLE refusals_hourly (
  key_id TEXT NOT NULL,
  t BIGINT NOT NULL,
  code TEXT NOT NULL,
  account_id BIGINT NOT NULL,
  status INTEGER NOT NULL,
  count BIGINT NOT NULL,
  PRIMARY KEY (key_id, t, code)
);
CREATE INDEX refusals_hourly_account ON refusals_hourly(account_id, t);
CREATE INDEX refusals_hourly_time ON refusals_hourly(t);
`
