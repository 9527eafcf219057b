/**
 * @module
 * SQLite schema v17: prompt-cache tokens counted (DESIGN §14 "cached and cache-write tokens are
 * priced and shown"). `usage_minute_cache` keeps, per account, minute and the model whose tokens
 * they are, the tokens of `prompt_tokens` the provider read from its prompt cache
 * (`cached_tokens`) and wrote to it (`cache_write_tokens`), for `/v1/usage`: beside
 * `usage_minutes`, written only when a request read or wrote the cache (as `usage_minute_costs`,
 * v9, and `usage_minute_estimates`, v16), so the counters stay as they are.
 */
export const CACHE_TOKENS_V17 = `
  CREATE TABLE usage_minute_cache (
    account_id INTEGER NOT NULL,
    minute INTEGER NOT NULL,
    model TEXT NOT NULL,
    cached_tokens INTEGER NOT NULL,
    cache_write_tokens INTEGER NOT NULL,
    PRIMARY KEY (account_id, minute, model)
  ) WITHOUT ROWID;
`
