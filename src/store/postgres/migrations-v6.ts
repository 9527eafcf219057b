/**
 * @module
 * PostgreSQL schema v6: per-minute usage counters, so `/v1/usage` sums at most a day's minutes
 * per model instead of scanning the log (as on SQLite, `usage_minutes`).
 *
 * Two tables, so admissions and outcome batches never wait for each other's rows (no deadlock
 * between them whatever the order): `usage_minutes` counts requests, kept by a trigger on the
 * admission's insert, inside the admission's transaction (after the account's row lock, so only
 * one admission of an account at a time touches it; the Redis path's insert locks nothing else);
 * `usage_minute_outcomes` adds tokens and errors, kept by the outcome batch, which writes its rows
 * in ascending (account, minute, model) order so two replicas' batches cannot deadlock either.
 * Both are filled from the existing log here.
 */

export const USAGE_MINUTES_V6 = `
CREATE TABLE usage_minutes (
  account_id BIGINT NOT NULL, minute BIGINT NOT NULL, model TEXT NOT NULL,
  requests BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (account_id, minute, model)
);
CREATE TABLE usage_minute_outcomes (
  account_id BIGINT NOT NULL, minute BIGINT NOT NULL, model TEXT NOT NULL,
  prompt_tokens BIGINT NOT NULL DEFAULT 0, completion_tokens BIGINT NOT NULL DEFAULT 0,
  errors BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (account_id, minute, model)
);
INSERT INTO usage_minutes (account_id, minute, model, requests)
  SELECT account_id, created_at / 60000, model, COUNT(*) FROM requests GROUP BY 1, 2, 3;
INSERT INTO usage_minute_outcomes (account_id, minute, model, prompt_tokens, completion_tokens, errors)
  SELECT account_id, created_at / 60000, model, COALESCE(SUM(prompt_tokens), 0),
    COALESCE(SUM(completion_tokens), 0), COUNT(*) FILTER (WHERE status >= 400)
  FROM requests WHERE status IS NOT NULL GROUP BY 1, 2, 3;
CREATE FUNCTION switchyard_count_request() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  INSERT INTO usage_minutes AS x (account_id, minute, model, requests)
    VALUES (NEW.account_id, NEW.created_at / 60000, NEW.model, 1)
    ON CONFLICT (account_id, minute, model) DO UPDATE SET requests = x.requests + 1;
  RETURN NULL;
END
$fn$;
CREATE TRIGGER requests_count AFTER INSERT ON requests
  FOR EACH ROW EXECUTE FUNCTION switchyard_count_request();
`
