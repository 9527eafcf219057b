/**
 * A separate process that takes SQLite's write lock on a database file (`BEGIN IMMEDIATE`),
 * says "locked" on stdout, holds it for HOLD_MS or until SIGUSR2 (a test that can see the moment
 * it needs, a failed write, lets go then rather than after a fixed time), then commits and exits.
 * Usage: bun test/support/lock-holder.ts DB_PATH HOLD_MS
 */
import { Database } from 'bun:sqlite'

const [path, holdMs] = process.argv.slice(2)
const db = new Database(path!)
db.run('PRAGMA busy_timeout = 10000')
// Listening before "locked" is said: a signal sent as soon as it is read never meets the default
// action (exit, the lock dropped uncommitted).
let letGo = () => {}
process.once('SIGUSR2', () => letGo())
db.run('BEGIN IMMEDIATE')
console.log('locked')
await new Promise<void>((resolve) => {
  const timer = setTimeout(resolve, Number(holdMs))
  letGo = () => {
    clearTimeout(timer)
    resolve()
  }
})
db.run('COMMIT')
db.close()
