/**
 * @module
 * PostgreSQL schema v20: prompt-cache tokens per key in the hourly and daily rollups, as SQLite's
 * v18 (migrations-v18.ts there): `cached_tokens` and `cache_write_tokens` of `prompt_tokens`, per
 * (bucket, account, key, model, surface), to the model that answered; buckets from before are 0.
 */
export const CACHE_ROLLUPS_V20 = `
ALTER TABLE usage_hourly ADD COLUMN cached_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE usage_hourly ADD COLUMN cache_write_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE usage_daily ADD COLUMN cached_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE usage_daily ADD COLUMN cache_write_tokens BIGINT NOT NULL DEFAULT 0;
`
