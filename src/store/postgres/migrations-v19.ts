/**
 * @module
 * PostgreSQL schema v19: prompt-cache tokens counted, as SQLite's v17. `usage_minute_outcomes`
 * gains the tokens of `prompt_tokens` the provider read from its prompt cache (`cached_tokens`)
 * and wrote to it (`cache_write_tokens`), per account, minute and the model whose tokens they are;
 * minutes from before this are 0.
 */
export const CACHE_TOKENS_V19 = `
ALTER TABLE usage_minute_outcomes ADD COLUMN cached_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE usage_minute_outcomes ADD COLUMN cache_write_tokens BIGINT NOT NULL DEFAULT 0;
`
