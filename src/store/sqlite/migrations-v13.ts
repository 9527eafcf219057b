/**
 * @module
 * SQLite schema v13: the sweeper finds unsettled charges without an index (reserve.ts `sweep`).
 * `charges_unsettled` cost every metered admission and every settlement a page of its own in
 * their commits (~7 µs an admission committed alone); the sweeper instead reads, account by
 * account along the primary key, the charges made since the last sweep's bound (`charge_sweep`:
 * every charge made before `mark` is settled). Converted: the mark starts at the oldest unsettled
 * charge (else the newest charge, else 0).
 */

export const SWEEP_V13 = `
CREATE TABLE charge_sweep (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  mark INTEGER NOT NULL
);
INSERT INTO charge_sweep (id, mark) VALUES (1, COALESCE(
  (SELECT MIN(created_at) FROM charges WHERE settled = 0),
  (SELECT MAX(created_at) FROM charges),
  0));
DROP INDEX charges_unsettled;
`
