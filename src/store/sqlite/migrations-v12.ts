/**
 * @module
 * SQLite schema v12: a scope's sliding-window sums and money counters in one row
 * (`limit_scopes`, scopes.ts), so admission reads them and the charges that left the windows in
 * one statement and writes them back in one.
 *
 * Per scope (`a:<account id>`, `k:<key id>`) and span (`m` minute, `d` day): `start`, the edge
 * the sums were last moved to (each sum is the charges made after it), and `first`, the oldest
 * charge after it (null: none), so an admission that finds `first` still inside the window knows
 * nothing left it without reading the charges. The sums: `rm`/`rd` requests, `tm`/`td` tokens
 * (null: not kept; summed afresh from the charges when a row needs it). Money: per calendar
 * period kind (`pd` day, `pw` week, `pm` month) the micro-dollars charged in the period starting
 * at `p?_start`; a counter whose start is not the current period's counts as 0 (its period is
 * over, and nothing reads a past one).
 *
 * Converted from v9's tables: `limit_sums` (one row per scope and window, each with its own
 * start) — a span's start is its token window's (else its request window's), a sum is carried
 * over when its start is that one (else left null, to be summed afresh), and `first` is set to
 * the start (at or before the oldest charge after it, so the next admission looks up the exact
 * one); `spend` (a row per scope, period kind and start) — the latest period of each kind.
 */

export const SCOPES_V12 = `
CREATE TABLE limit_scopes (
  scope TEXT PRIMARY KEY,
  m_start INTEGER NOT NULL,
  m_first INTEGER,
  d_start INTEGER NOT NULL,
  d_first INTEGER,
  rm INTEGER,
  rd INTEGER,
  tm INTEGER,
  td INTEGER,
  pd_start INTEGER,
  pd INTEGER,
  pw_start INTEGER,
  pw INTEGER,
  pm_start INTEGER,
  pm INTEGER
) WITHOUT ROWID;
INSERT INTO limit_scopes (scope, m_start, m_first, d_start, d_first, rm, rd, tm, td, pd_start, pd, pw_start, pw, pm_start, pm)
SELECT g.scope, g.ms, g.ms, g.ds, g.ds,
  (SELECT used FROM limit_sums s WHERE s.scope = g.scope AND s.win = 'requests:minute' AND s.start = g.ms),
  (SELECT used FROM limit_sums s WHERE s.scope = g.scope AND s.win = 'requests:day' AND s.start = g.ds),
  (SELECT used FROM limit_sums s WHERE s.scope = g.scope AND s.win = 'tokens:minute' AND s.start = g.ms),
  (SELECT used FROM limit_sums s WHERE s.scope = g.scope AND s.win = 'tokens:day' AND s.start = g.ds),
  (SELECT MAX(start) FROM spend p WHERE p.scope = g.scope AND p.period = 'day'),
  (SELECT micros FROM spend p WHERE p.scope = g.scope AND p.period = 'day' ORDER BY start DESC LIMIT 1),
  (SELECT MAX(start) FROM spend p WHERE p.scope = g.scope AND p.period = 'week'),
  (SELECT micros FROM spend p WHERE p.scope = g.scope AND p.period = 'week' ORDER BY start DESC LIMIT 1),
  (SELECT MAX(start) FROM spend p WHERE p.scope = g.scope AND p.period = 'month'),
  (SELECT micros FROM spend p WHERE p.scope = g.scope AND p.period = 'month' ORDER BY start DESC LIMIT 1)
FROM (
  SELECT a.scope,
    COALESCE(MAX(CASE WHEN win = 'tokens:minute' THEN start END), MAX(CASE WHEN win = 'requests:minute' THEN start END), 0) AS ms,
    COALESCE(MAX(CASE WHEN win = 'tokens:day' THEN start END), MAX(CASE WHEN win = 'requests:day' THEN start END), 0) AS ds
  FROM (SELECT scope FROM limit_sums UNION SELECT scope FROM spend) a
  LEFT JOIN limit_sums l ON l.scope = a.scope
  GROUP BY a.scope
) g;
DROP TABLE limit_sums;
DROP TABLE spend;
`
