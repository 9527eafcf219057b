/**
 * @module
 * Connections opened as calls need them, up to `database.pool_size`, and closed after
 * `IDLE_S` unused. Bun.SQL (1.4.4) fills its whole pool at the first query, and again at the
 * first query after every connection has idled out (oven-sh/bun#30631 asks for a lazy option;
 * none exists): each connection is a backend the server forks (~50–80 ms of its CPU), most of
 * them idle on a quiet gateway. So the pool is ours: up to `max` one-connection Bun.SQL clients
 * (members), each a connection Bun opens at its first query, closes after `IDLE_S` with nothing
 * to do and opens again when a call next needs it.
 *
 * A call goes to the first member with no call in flight — the members opened first take the
 * calls, so those opened for a burst go unused and close once it has passed; else, below `max`,
 * to a new member; else to the member with the fewest calls in flight, where Bun pipelines it
 * behind them, as its own pool does when every connection is busy. A whole call stays on one
 * connection (its statements, its `begin()`).
 */
import type { SQL } from 'bun'

/** Seconds a connection may sit unused before it is closed (Bun's `idleTimeout`). */
export const IDLE_S = 60

interface Member {
  sql: SQL
  /** Calls running on it now. */
  calls: number
}

export class GrowingPool {
  private readonly members: Member[] = []

  constructor(
    /** A one-connection client (`max: 1`, `idleTimeout: IDLE_S`) to the pool's server. */
    private readonly open: () => SQL,
    /** `database.pool_size`: connections at most. */
    readonly max: number,
  ) {}

  /** Members made so far (each holds a connection while it is in use and `IDLE_S` after). */
  get size(): number {
    return this.members.length
  }

  /**
   * Runs `fn` on one connection of the pool.
   * @example
   * const rows = await pool.use((sql) => sql`SELECT 1`)
   */
  async use<T>(fn: (sql: SQL) => Promise<T>): Promise<T> {
    const m = this.take()
    m.calls++
    try {
      return await fn(m.sql)
    } finally {
      m.calls--
    }
  }

  private take(): Member {
    let least: Member | undefined
    for (const m of this.members) {
      if (m.calls === 0) return m
      if (!least || m.calls < least.calls) least = m
    }
    if (least && this.members.length >= this.max) return least
    const m = { sql: this.open(), calls: 0 }
    this.members.push(m)
    return m
  }

  /** Closes every connection (`timeout` as Bun's `close`: 0 = at once, none = after the queries). */
  async close(opts?: { timeout?: number }): Promise<void> {
    await Promise.all(this.members.map((m) => m.sql.close(opts)))
  }
}
