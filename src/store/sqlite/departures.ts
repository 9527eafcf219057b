/**
 * @module
 * An account's next charges to leave a span, kept across transactions so that under a steady
 * load an admission takes what left its span from memory rather than from the table (scopes.ts).
 */

/** What left a span's window since its start: charges, their tokens, the oldest one still in it. */
export interface Gone {
  n: number
  t: number
  next: number | null
}

/** Reads of next departures skipped after one that kept fewer than two charges. */
const SHORT_READ_SKIPS = 16

/**
 * The charges next to leave an account's span: every charge made after `from` and before `stop`
 * (an existing charge's time, or `from` when none was read), oldest first, all settled. Settlement
 * and the sweep change only unsettled charges, and a charge made later is never older than the
 * account's newest (`created_at` never goes backwards within an account), so what these rows say
 * of that stretch holds in any later transaction, in this process or another's.
 */
export class Departures {
  /** Asks still to go without reading (set when this read kept fewer than two charges). */
  skips = 0
  private constructor(
    private readonly from: number,
    private readonly stop: number,
    /** Each charge's time and tokens, in turn. */
    private readonly rows: number[],
  ) {}

  /**
   * From the charges after `edge` read oldest first (time, tokens, settled): the settled ones
   * before the first unsettled. The last one read (or the unsettled) bounds them: a charge of the
   * same time may follow it.
   */
  static read(edge: number, read: [number, number, number][]): Departures {
    const rows: number[] = []
    let stop = read.length ? read[read.length - 1]![0] : edge
    for (const [at, tokens, settled] of read) {
      if (settled !== 1) {
        stop = at
        break
      }
      rows.push(at, tokens)
    }
    const d = new Departures(edge, stop, rows)
    if (rows.length < 4) d.skips = SHORT_READ_SKIPS // fewer than two charges (two numbers each)
    return d
  }

  /** What left between `start` and `edge`, or null when it reaches past what these rows cover. */
  between(start: number, edge: number): Gone | null {
    if (start < this.from || edge >= this.stop) return null
    const rows = this.rows
    let n = 0
    let t = 0
    for (let i = 0; i < rows.length; i += 2) {
      const at = rows[i]!
      if (at <= start) continue
      if (at > edge) return { n, t, next: at }
      n++
      t += rows[i + 1]!
    }
    return { n, t, next: this.stop }
  }
}
