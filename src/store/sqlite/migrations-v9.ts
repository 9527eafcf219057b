/**
 * @module
 * SQLite schema v9: tokens and money (DESIGN §11).
 *
 * - A key's own limits, one column each (null = not set); `models` is a JSON array of model ids.
 *   Changing them changes what authentication answers (the key's limits ride with it), so a
 *   trigger bumps the authentication generation as migration 7's do for the other columns.
 * - What each request cost (`cost_micros`, integer micro-dollars) in the request log and the
 *   hourly and daily rollups; per minute in `usage_minute_costs` beside `usage_minutes` (written
 *   only when a request cost something, so admission's counters stay as they are).
 * - Reserve and settle: `charges`, one row per admission that charged more than a request
 *   (tokens, money, or a key's own rows), keyed like its admission; what it charged (`tokens`,
 *   `charge_micros`: the reservation until settled, then the upstream's usage), whether it is
 *   `settled`, and `budgets`, the money counters it charged (bits: account period 0-1, key period
 *   2-3; 0 none, 1 day, 2 week, 3 month). Admissions without them (no token or money limits)
 *   write nothing here. `limit_sums` keeps each sliding window's running sum (the charges after
 *   `start`) so admission never sums a window; `spend` the money charged per scope and calendar
 *   period. Unsettled charges are indexed for the sweeper.
 */

export const TOKENS_V9 = `
ALTER TABLE api_keys ADD COLUMN rpm INTEGER;
ALTER TABLE api_keys ADD COLUMN rpd INTEGER;
ALTER TABLE api_keys ADD COLUMN tpm INTEGER;
ALTER TABLE api_keys ADD COLUMN tpd INTEGER;
ALTER TABLE api_keys ADD COLUMN budget_micros INTEGER;
ALTER TABLE api_keys ADD COLUMN budget_period TEXT CHECK (budget_period IN ('day', 'week', 'month'));
ALTER TABLE api_keys ADD COLUMN models TEXT;
CREATE TRIGGER api_keys_auth_limits
  AFTER UPDATE OF rpm, rpd, tpm, tpd, budget_micros, budget_period, models ON api_keys
  WHEN OLD.rpm IS NOT NEW.rpm OR OLD.rpd IS NOT NEW.rpd OR OLD.tpm IS NOT NEW.tpm OR OLD.tpd IS NOT NEW.tpd
    OR OLD.budget_micros IS NOT NEW.budget_micros OR OLD.budget_period IS NOT NEW.budget_period
    OR OLD.models IS NOT NEW.models
  BEGIN UPDATE auth_generation SET n = n + 1 WHERE id = 1; END;
ALTER TABLE requests ADD COLUMN cost_micros INTEGER;
ALTER TABLE usage_hourly ADD COLUMN cost_micros INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_daily ADD COLUMN cost_micros INTEGER NOT NULL DEFAULT 0;
CREATE TABLE usage_minute_costs (
  account_id INTEGER NOT NULL,
  minute INTEGER NOT NULL,
  model TEXT NOT NULL,
  cost_micros INTEGER NOT NULL,
  PRIMARY KEY (account_id, minute, model)
) WITHOUT ROWID;
CREATE TABLE charges (
  account_id INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  key_id TEXT NOT NULL,
  tokens INTEGER NOT NULL,
  charge_micros INTEGER NOT NULL,
  budgets INTEGER NOT NULL,
  settled INTEGER NOT NULL,
  PRIMARY KEY (account_id, created_at, seq)
) WITHOUT ROWID;
CREATE INDEX charges_unsettled ON charges(created_at) WHERE settled = 0;
CREATE TABLE limit_sums (
  scope TEXT NOT NULL,
  win TEXT NOT NULL,
  start INTEGER NOT NULL,
  used INTEGER NOT NULL,
  PRIMARY KEY (scope, win)
) WITHOUT ROWID;
CREATE TABLE spend (
  scope TEXT NOT NULL,
  period TEXT NOT NULL,
  start INTEGER NOT NULL,
  micros INTEGER NOT NULL,
  PRIMARY KEY (scope, period, start)
) WITHOUT ROWID;
`
