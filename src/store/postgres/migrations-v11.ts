/**
 * @module
 * PostgreSQL schema v11: upstream attempts in the request log (DESIGN §10), as SQLite's v10
 * (sqlite/migrations-v10.ts says what each column is for). Nullable columns: no table rewrite.
 */
export const ATTEMPTS_V11 = `
  ALTER TABLE requests ADD COLUMN IF NOT EXISTS attempts INTEGER;
  ALTER TABLE requests ADD COLUMN IF NOT EXISTS answered_by TEXT;
`
