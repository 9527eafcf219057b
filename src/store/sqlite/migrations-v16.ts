/**
 * @module
 * SQLite schema v16: settled estimates flagged (DESIGN §11 "One ledger"). `requests.estimated` is
 * 1 when the row's tokens and cost were worked out by the gateway (a stream the client left, an
 * upstream that cut or sent no usage) rather than read from the upstream's usage; rows from before
 * this are 0. `usage_minute_estimates` counts those requests per account, minute and the model
 * whose tokens they are, for `/v1/usage` (`estimated_requests`): beside `usage_minutes`, written
 * only when a request was estimated (as `usage_minute_costs`, v9), so the counters stay as they are.
 */
export const ESTIMATED_V16 = `
  ALTER TABLE requests ADD COLUMN estimated INTEGER NOT NULL DEFAULT 0;
  CREATE TABLE usage_minute_estimates (
    account_id INTEGER NOT NULL,
    minute INTEGER NOT NULL,
    model TEXT NOT NULL,
    requests INTEGER NOT NULL,
    PRIMARY KEY (account_id, minute, model)
  ) WITHOUT ROWID;
`
