/**
 * @module
 * SQLite schema v14: a metered admission writes one row, as a plain one does. The charge (v9's
 * `charges`) moves into its admission's row, and an account's limit state (v12's `limit_scopes`
 * row `a:<id>`) into the account's newest admission row, which later admissions carry forward
 * (a transaction writes it on the account's last row of it only: limiter.ts).
 *
 * Why: an admission's cost is mostly its commit, and a commit's cost is the pages it writes. A
 * metered admission wrote two pages besides the plain one's (the charge's, the scope row's); the
 * account's newest admission row is on the page every admission of the account writes anyway.
 *
 * - Charge columns (null on an admission that charged nothing): `key_id`, `tokens`,
 *   `charge_micros`, `budgets`, `settled` — as in v9's `charges`.
 * - The account's state after this admission (null: none kept yet) — as in v12's `limit_scopes`:
 *   `m_start`, `m_first`, `d_start`, `d_first`, `rm`, `rd`, `tm`, `td`, `pd_start`, `pd`,
 *   `pw_start`, `pw`, `pm_start`, `pm`. Only the newest row's is read; retention keeps it.
 * - A key's own limit state stays in `limit_scopes` (`k:<id>`): keys have no admission chain.
 *
 * Converted: each charge into its admission's row (a charge whose admission was already trimmed
 * gets one: older than a day, it is in no request window); each account scope into its newest
 * admission (an account with none gets a row at time 0 that only carries it); then `charges` and
 * the account rows of `limit_scopes` go.
 */

const STATE = [
  'm_start',
  'm_first',
  'd_start',
  'd_first',
  'rm',
  'rd',
  'tm',
  'td',
  'pd_start',
  'pd',
  'pw_start',
  'pw',
  'pm_start',
  'pm',
] as const

/** The account state's columns, in the order admissions and `limit_scopes` store them. */
export const STATE_COLUMNS: readonly string[] = STATE

const newest = (account: string) =>
  `FROM admissions WHERE account_id = ${account} ORDER BY created_at DESC, seq DESC LIMIT 1`

export const ADMISSION_CHARGES_V14 = `
ALTER TABLE admissions ADD COLUMN key_id TEXT;
ALTER TABLE admissions ADD COLUMN tokens INTEGER;
ALTER TABLE admissions ADD COLUMN charge_micros INTEGER;
ALTER TABLE admissions ADD COLUMN budgets INTEGER;
ALTER TABLE admissions ADD COLUMN settled INTEGER;
${STATE.map((c) => `ALTER TABLE admissions ADD COLUMN ${c} INTEGER;`).join('\n')}
INSERT INTO admissions (account_id, created_at, seq, key_id, tokens, charge_micros, budgets, settled)
  SELECT account_id, created_at, seq, key_id, tokens, charge_micros, budgets, settled FROM charges WHERE true
  ON CONFLICT (account_id, created_at, seq) DO UPDATE SET key_id = excluded.key_id,
    tokens = excluded.tokens, charge_micros = excluded.charge_micros, budgets = excluded.budgets,
    settled = excluded.settled;
INSERT INTO admissions (account_id, created_at, seq)
  SELECT CAST(substr(s.scope, 3) AS INTEGER), 0, 0 FROM limit_scopes s
  WHERE s.scope LIKE 'a:%'
    AND NOT EXISTS (SELECT 1 FROM admissions a WHERE a.account_id = CAST(substr(s.scope, 3) AS INTEGER));
WITH scopes AS (SELECT CAST(substr(scope, 3) AS INTEGER) AS account FROM limit_scopes WHERE scope LIKE 'a:%')
UPDATE admissions SET (${STATE.join(', ')}) =
    (SELECT ${STATE.join(', ')} FROM limit_scopes s WHERE s.scope = 'a:' || admissions.account_id)
  WHERE (account_id, created_at, seq) IN
    (SELECT account, (SELECT created_at ${newest('account')}), (SELECT seq ${newest('account')}) FROM scopes);
DELETE FROM limit_scopes WHERE scope LIKE 'a:%';
DROP TABLE charges;
`
