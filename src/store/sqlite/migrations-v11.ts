/**
 * @module
 * SQLite schema v11: refusals before admission, per key, code and UTC hour (`refusals.ts`): one
 * row per (key, hour, code), so a flood of refusals adds to a count instead of rows.
 */

export const REFUSALS_V11 = `
  CREATE TABLE refusals_hourly (
    key_id TEXT NOT NULL,
    t INTEGER NOT NULL,
    code TEXT NOT NULL,
    account_id INTEGER NOT NULL,
    status INTEGER NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (key_id, t, code)
  ) WITHOUT ROWID;
  CREATE INDEX refusals_hourly_account ON refusals_hourly(account_id, t);
  CREATE INDEX refusals_hourly_time ON refusals_hourly(t);
`
