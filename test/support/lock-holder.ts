/**
 * A separate process that takes SQLite's write lock on a database file (`BEGIN IMMEDIATE`),
 * says "locked" on stdout, holds it for HOLD_MS, then commits and exits.
 * Usage: bun test/support/lock-holder.ts DB_PATH HOLD_MS
 */
import { Database } from 'bun:sqlite'

const [path, holdMs] = process.argv.slice(2)
const db = new Database(path!)
db.run('PRAGMA busy_timeout = 10000')
db.run('BEGIN IMMEDIATE')
console.log('locked')
await Bun.sleep(Number(holdMs))
db.run('COMMIT')
db.close()
