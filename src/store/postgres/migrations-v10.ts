/**
 * @module
 * PostgreSQL schema v10: tokens and money (DESIGN §11), the same shape as SQLite's v9
 * (sqlite/migrations-v9.ts says what each part is for).
 *
 * - A key's own limits, one nullable column each (`models`: a JSON array as text); a deferred
 *   trigger bumps the authentication generation when they change (as v7's do).
 * - `cost_micros` (integer micro-dollars) in the request log, the per-minute outcome counters
 *   and the hourly and daily rollups.
 * - Reserve and settle on the admission log (the `requests` row written at admission): what it
 *   charged (`tokens`, `charge_micros`), whether it is `settled`, which money counters it charged
 *   (`budgets`); `limit_sums` (running sums of the sliding token windows) and `spend` (money per
 *   scope and calendar period). Adding defaulted columns rewrites no table (PostgreSQL 11+).
 */

export const TOKENS_V10 = `
ALTER TABLE api_keys ADD COLUMN rpm INTEGER, ADD COLUMN rpd INTEGER, ADD COLUMN tpm BIGINT,
  ADD COLUMN tpd BIGINT, ADD COLUMN budget_micros BIGINT,
  ADD COLUMN budget_period TEXT CHECK (budget_period IN ('day', 'week', 'month')), ADD COLUMN models TEXT;
CREATE CONSTRAINT TRIGGER api_keys_auth_limits
  AFTER UPDATE OF rpm, rpd, tpm, tpd, budget_micros, budget_period, models ON api_keys
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (
    OLD.rpm IS DISTINCT FROM NEW.rpm OR OLD.rpd IS DISTINCT FROM NEW.rpd
    OR OLD.tpm IS DISTINCT FROM NEW.tpm OR OLD.tpd IS DISTINCT FROM NEW.tpd
    OR OLD.budget_micros IS DISTINCT FROM NEW.budget_micros
    OR OLD.budget_period IS DISTINCT FROM NEW.budget_period OR OLD.models IS DISTINCT FROM NEW.models)
  EXECUTE FUNCTION switchyard_auth_changed();
ALTER TABLE requests ADD COLUMN cost_micros BIGINT, ADD COLUMN tokens BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN charge_micros BIGINT NOT NULL DEFAULT 0, ADD COLUMN settled BOOLEAN NOT NULL DEFAULT TRUE,
  ADD COLUMN budgets INTEGER NOT NULL DEFAULT 0;
CREATE INDEX requests_unsettled ON requests(created_at) WHERE NOT settled;
ALTER TABLE usage_minute_outcomes ADD COLUMN cost_micros BIGINT NOT NULL DEFAULT 0;
ALTER TABLE usage_hourly ADD COLUMN cost_micros BIGINT NOT NULL DEFAULT 0;
ALTER TABLE usage_daily ADD COLUMN cost_micros BIGINT NOT NULL DEFAULT 0;
CREATE TABLE limit_sums (
  scope TEXT NOT NULL, win TEXT NOT NULL, start BIGINT NOT NULL, used BIGINT NOT NULL,
  PRIMARY KEY (scope, win)
);
CREATE TABLE spend (
  scope TEXT NOT NULL, period TEXT NOT NULL, start BIGINT NOT NULL, micros BIGINT NOT NULL,
  PRIMARY KEY (scope, period, start)
);
`
