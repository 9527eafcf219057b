/**
 * @module
 * The running check of an answer's output against what its reservation holds (DESIGN §11): the
 * stream path counts the generated text as it arrives (all choices, `outputTokenCount`) and asks
 * this class, before relaying each chunk that carries text, whether more may be relayed after
 * what was counted so far. When it may not, the answer ends as cut at the allowance
 * (`finish_reason: "length"`, Messages `stop_reason: "max_tokens"`, Responses `incomplete` /
 * `max_output_tokens`) and the upstream request is cancelled: the chunk that crossed the line is
 * the only one relayed beyond the allowance. Asked before, not after, a chunk: a count is an upper
 * bound, so an upstream that honours its cap may cross the line by a token or two with its last
 * chunk — it is relayed, and its finish and usage (no text) still are.
 *
 * Made only when a token or money row applies (pipeline/charge.ts): a request without one has no
 * allowance and its stream does no counting at all.
 *
 * Growth (reservations that grow as the answer arrives): a `grow` function given to the
 * constructor is asked, when the count has reached the limit and more text arrives, to extend the
 * reservation; it resolves to the new limit (the old one when nothing more could be had). While
 * it runs the stream waits; the answer goes on if the count is below the new limit. Without it
 * the limit is fixed.
 *
 * @example
 * const allowance = new OutputAllowance(reservation.outputTokens, 'openai')
 * if (!(await allowance.allows())) cutHere()       // before a chunk: a plain boolean unless it grows
 * allowance.add(chunkText)                          // the running count, all choices
 */
import type { ProviderKind } from '../config/schema-providers.ts'
import { outputTokenCount } from '../limits/output-count.ts'
import { isSpace } from '../limits/space.ts'
import type { CutGate } from './stream/types.ts'

/**
 * Asked for more room once `counted` output tokens reached `limit` and more text arrived:
 * resolves to the new limit (at least `limit`; `limit` itself when the rows cannot cover more).
 */
export type GrowOutput = (counted: number, limit: number) => Promise<number>

/** The running count as `OutputAllowance.mark` found it, for `restore`. */
export interface AllowanceMark {
  readonly total: number
  readonly refused: boolean
  readonly carry: ReadonlyArray<readonly [number, string]>
}

export class OutputAllowance {
  private max: number
  private total = 0
  private refused = false
  /**
   * Per stream of text (a choice, an output item, a content block), a text's last character when
   * it is whitespace, counted with that stream's next text: byte-pair encoders join a space to the
   * word after it (`"w "` + `"w"` is `w`, ` w`, not three tokens), so counting chunk by chunk would
   * otherwise add a token a chunk. One character a stream at most, so nothing goes uncounted for
   * longer than one chunk.
   */
  private readonly carry = new Map<number, string>()

  constructor(
    /** Output tokens the reservation holds for the whole answer: n × the per-choice cap. */
    limit: number,
    /** How the answering provider's text is counted (limits/output-count.ts); a continuation on another kind sets its own. */
    public kind: ProviderKind,
    private readonly grow?: GrowOutput,
  ) {
    this.max = limit
  }

  /** Output tokens the answer may reach now. */
  get limit(): number {
    return this.max
  }

  /** Output tokens counted so far (every `add`). */
  get counted(): number {
    return this.total
  }

  /** The answer was cut here: `allows` said no. */
  get cut(): boolean {
    return this.refused
  }

  /** Output tokens generated so far, what is carried included (an upper bound of what the upstream bills). */
  get generated(): number {
    let n = this.total
    for (const c of this.carry.values()) n += outputTokenCount(c, this.kind)
    return n
  }

  /** Counts generated text (of any choice) into the running count; returns the new count. */
  add(text: string): number {
    this.total += outputTokenCount(text, this.kind)
    return this.total
  }

  /** Stream `index` has whitespace carried to its next text. */
  carries(index: number): boolean {
    return this.carry.has(index)
  }

  /**
   * Counts text of stream `index` (`add`), with what that stream carried in front; its trailing
   * whitespace is carried to the stream's next text unless the stream `finished` here.
   */
  addTo(index: number, text: string, finished = false): void {
    const carried = this.carry.get(index)
    if (carried !== undefined) {
      text = carried + text
      this.carry.delete(index)
    }
    const end = text.length - 1
    if (!finished && end >= 0 && isSpace(text.charCodeAt(end))) {
      this.carry.set(index, text.charAt(end))
      text = text.slice(0, end)
    }
    if (text !== '') this.add(text)
  }

  /** Stream `index` ended: what it carried is counted. */
  end(index: number): void {
    this.addTo(index, '', true)
  }

  /**
   * Whether more may be relayed after an answer that has generated `counted` output tokens (all
   * choices; by default what `add` counted): yes below the limit; at or past it, a plain no — or,
   * when the reservation may grow, a promise of the answer. Once it said no it says no for good.
   */
  allows(counted: number = this.total): boolean | Promise<boolean> {
    if (this.refused) return false
    if (counted < this.max) return true
    if (!this.grow) return this.no()
    return this.grown(counted)
  }

  /** Asks `grow` for room past `counted`: apart, so `allows` makes no scope for its closures. */
  private grown(counted: number): Promise<boolean> {
    return this.grow!(counted, this.max).then(
      (limit) => {
        this.max = Math.max(this.max, limit)
        return counted < this.max || this.no()
      },
      () => this.no(),
    )
  }

  /**
   * The count as it is now, for `restore`: taken when a JSON attempt begins (pipeline/call.ts).
   * One allowance serves every attempt of the request; a JSON attempt that fails reached the
   * client with nothing, so what it counted is given back (DESIGN §10: failed attempts are never
   * billed) — else its retry starts with that count spent, is cut short, and the cut settles to
   * text nobody got. A stream's failed attempt is not given back: what it relayed reached the
   * client, and its continuation counts it (DESIGN §11).
   */
  mark(): AllowanceMark {
    return { total: this.total, refused: this.refused, carry: [...this.carry] }
  }

  /**
   * The count back to `m` (`mark`). The limit stays: a reservation the failed attempt grew is held
   * still (the request settles it at its end), and the retry may use it.
   */
  restore(m: AllowanceMark): void {
    this.total = m.total
    this.refused = m.refused
    this.carry.clear()
    for (const [index, c] of m.carry) this.carry.set(index, c)
  }

  private no(): false {
    this.refused = true
    return false
  }
}

/**
 * A cut gate that counts into the request's allowance (output-cut.ts `ChunkGate`, the
 * pass-throughs' own): whether it cut and what it counted are the allowance's.
 */
export abstract class AllowanceGate<T> implements CutGate<T> {
  constructor(
    protected readonly allowance: OutputAllowance,
    /** The input side of the usage shown at a cut: the reservation's input bound (as settled). */
    protected readonly inputTokens = 0,
  ) {}

  /** The allowance ended the answer. */
  get cut(): boolean {
    return this.allowance.cut
  }

  /** Output tokens generated so far, all choices (an upper bound of what the upstream bills). */
  get counted(): number {
    return this.allowance.generated
  }

  mark(): () => void {
    const m = this.allowance.mark()
    return () => this.allowance.restore(m)
  }

  abstract admit(item: T): boolean | Promise<boolean>
  abstract ending(): T[]
}
