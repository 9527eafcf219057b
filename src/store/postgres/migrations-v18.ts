/**
 * @module
 * PostgreSQL schema v18: settled estimates flagged (DESIGN §11 "One ledger"), as SQLite's v16.
 * `requests.estimated` is true when the row's tokens and cost were worked out by the gateway (a
 * stream the client left, an upstream that cut or sent no usage) rather than read from the
 * upstream's usage; rows from before this are false. `usage_minute_outcomes.estimated` counts
 * those requests per account, minute and the model whose tokens they are (`estimated_requests`).
 */
export const ESTIMATED_V18 = `
ALTER TABLE requests ADD COLUMN estimated BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE usage_minute_outcomes ADD COLUMN estimated INTEGER NOT NULL DEFAULT 0;
`
