/**
 * @module
 * PostgreSQL schema v7: the authentication cache's generation (src/auth/cache.ts), as on SQLite.
 * One row, bumped by triggers on every committed write that can change an authentication
 * answer, in the writer's own transaction: a replica that reads the new number can only then
 * read the new rows. Whoever writes (the CLI, another replica, the admission batch suspending a
 * key) bumps it without knowing about any cache.
 *
 * Only the columns auth reads, and only real changes: the limiter updates `accounts.admit_seq`
 * and the keys' rejection counters on every admission or 429, which must not empty the caches.
 *
 * The triggers are deferred to commit: the counter's row is then the last lock a transaction
 * takes, so it can never be part of a deadlock (an admission batch that suspends one key and
 * then counts a refusal of another, against an admin write on that other key).
 */

export const AUTH_GENERATION_V7 = `
CREATE TABLE auth_generation (id INTEGER PRIMARY KEY CHECK (id = 1), n BIGINT NOT NULL);
INSERT INTO auth_generation (id, n) VALUES (1, 0);
CREATE FUNCTION switchyard_auth_changed() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  UPDATE auth_generation SET n = n + 1 WHERE id = 1;
  RETURN NULL;
END
$fn$;
CREATE CONSTRAINT TRIGGER api_keys_auth_insert_delete AFTER INSERT OR DELETE ON api_keys
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION switchyard_auth_changed();
CREATE CONSTRAINT TRIGGER api_keys_auth_update
  AFTER UPDATE OF account_id, name, prefix, hash, state, suspended_until ON api_keys
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (
    OLD.account_id IS DISTINCT FROM NEW.account_id OR OLD.name IS DISTINCT FROM NEW.name
    OR OLD.prefix IS DISTINCT FROM NEW.prefix OR OLD.hash IS DISTINCT FROM NEW.hash
    OR OLD.state IS DISTINCT FROM NEW.state OR OLD.suspended_until IS DISTINCT FROM NEW.suspended_until)
  EXECUTE FUNCTION switchyard_auth_changed();
CREATE CONSTRAINT TRIGGER accounts_auth_delete AFTER DELETE ON accounts
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION switchyard_auth_changed();
CREATE CONSTRAINT TRIGGER accounts_auth_update
  AFTER UPDATE OF name, plan, enabled, plan_started_at, plan_expires_at ON accounts
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (
    OLD.name IS DISTINCT FROM NEW.name OR OLD.plan IS DISTINCT FROM NEW.plan
    OR OLD.enabled IS DISTINCT FROM NEW.enabled OR OLD.plan_started_at IS DISTINCT FROM NEW.plan_started_at
    OR OLD.plan_expires_at IS DISTINCT FROM NEW.plan_expires_at)
  EXECUTE FUNCTION switchyard_auth_changed();
`
