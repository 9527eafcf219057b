/**
 * @module
 * SQLite schema v16: settled estimates flagged (DESIGN §11 "One ledger"). `requests.estimated` is
 * 1 when the row's tokens and cost were worked out by the gateway (a stream the client left, an
 * upstream that cut or sent no usage) rather than read from the upstream's usage; rows from before
 * this are 0. `usage_minutes.estimated` counts those requests per account, minute and the model
 * whose tokens they are, for `/v1/usage` (`estimated_requests`).
 */
export const ESTIMATED_V16 = `
  ALTER TABLE requests ADD COLUMN estimated INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE usage_minutes ADD COLUMN estimated INTEGER NOT NULL DEFAULT 0;
`
