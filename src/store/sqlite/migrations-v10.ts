/**
 * @module
 * SQLite schema v10: upstream attempts in the request log (DESIGN §10). `attempts` counts the
 * upstream attempts one client request took (null: none, or a row from before this);
 * `answered_by` names the model that answered when it was not the one asked for (a fallback),
 * while `model` stays the admitted one, which the usage counters are keyed by.
 */
export const ATTEMPTS_V10 = `
  ALTER TABLE requests ADD COLUMN attempts INTEGER;
  ALTER TABLE requests ADD COLUMN answered_by TEXT;
`
