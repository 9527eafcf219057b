/**
 * @module
 * SQLite schema v18: prompt-cache tokens per key (DESIGN §14 "cached and cache-write tokens are
 * priced and shown"; issue 44's "per key"). The hourly and daily rollups, one row per (bucket,
 * account, key, model, surface), gain the tokens of `prompt_tokens` the provider read from its
 * prompt cache (`cached_tokens`) and wrote to it (`cache_write_tokens`), counted to the model that
 * answered as the other tokens are, so the admin key view, the usage series and the console's
 * spend by key show them beside the cost. Buckets from before this are 0 (v17's per-minute
 * counters are per account only and kept a day: nothing to backfill per key from).
 */
export const CACHE_ROLLUPS_V18 = `
  ALTER TABLE usage_hourly ADD COLUMN cached_tokens INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE usage_hourly ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE usage_daily ADD COLUMN cached_tokens INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE usage_daily ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
`
