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
 * to a new member; else it waits, first come first served, for the first member whose call ends,
 * as in Bun's own pool — never pinned behind one busy member, which may be inside a long
 * transaction or a lock wait while another frees at once. A whole call stays on one connection
 * (its statements, its `begin()`), and a member runs one call at a time.
 */
import type { SQL } from 'bun'

/** Seconds a connection may sit unused before it is closed (Bun's `idleTimeout`). */
export const IDLE_S = 60

interface Member {
  sql: SQL
  /** A call is running on it. */
  busy: boolean
}

export class GrowingPool {
  private readonly members: Member[] = []
  /** Calls waiting for a member, at `max`, oldest first: each is given the next member freed. */
  private readonly waiting: Array<{ take: (m: Member) => void; fail: (err: Error) => void }> = []
  private closed = false

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
    const m = this.take() ?? (await this.wait())
    try {
      return await fn(m.sql)
    } finally {
      this.free(m)
    }
  }

  /** A member with no call, marked busy; none at `max` with every member busy. */
  private take(): Member | undefined {
    for (const m of this.members) {
      if (!m.busy) {
        m.busy = true
        return m
      }
    }
    if (this.members.length >= this.max) return undefined
    const m = { sql: this.open(), busy: true }
    this.members.push(m)
    return m
  }

  private wait(): Promise<Member> {
    if (this.closed) return Promise.reject(new Error('the PostgreSQL pool is closed'))
    return new Promise((take, fail) => this.waiting.push({ take, fail }))
  }

  /** Hands `m` on to the oldest waiting call (still busy), or marks it free. */
  private free(m: Member): void {
    const next = this.waiting.shift()
    if (next) next.take(m)
    else m.busy = false
  }

  /**
   * Closes every connection (`timeout` as Bun's `close`: 0 = at once, none = after the queries);
   * the calls still waiting for one fail.
   */
  async close(opts?: { timeout?: number }): Promise<void> {
    this.closed = true
    const err = new Error('the PostgreSQL pool is closed')
    for (const w of this.waiting.splice(0)) w.fail(err)
    await Promise.all(this.members.map((m) => m.sql.close(opts)))
  }
}
