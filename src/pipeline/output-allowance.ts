/**
 * @module
 * The running check of an answer's output against what its reservation holds (DESIGN §11): the
 * stream path counts the generated text as it arrives (all choices, `outputTokenCount`) and asks
 * this class, after counting each item that carries text (a chunk, an event: `begin`, `addTo`,
 * `allows`), whether it may be relayed. It may when the count with it is within what is held;
 * else it is taken back out of the count and the answer ends there as cut at the allowance
 * (`finish_reason: "length"`, Messages `stop_reason: "max_tokens"`, Responses `incomplete` /
 * `max_output_tokens`), the upstream request cancelled. So what was relayed is what was counted,
 * never past the hold: the usage told at a cut and the settlement are that count (one ledger),
 * and a window never passes its limit. An item that brings the count exactly to the hold is
 * relayed and the answer goes on: an upstream that honours its cap ends with its own finish and
 * usage (decisions.md, cut62 and cut63).
 *
 * Made only when a token or money row applies (pipeline/charge.ts): a request without one has no
 * allowance and its stream does no counting at all.
 *
 * Growth (reservations that grow as the answer arrives): a `grow` function given to the
 * constructor is asked, when an item would take the count past what is held, to extend the
 * reservation; it resolves to the new limit (the old one when nothing more could be had). While
 * it runs the stream waits; the item is relayed if the count with it fits the new limit. Without
 * it the limit is fixed.
 *
 * @example
 * const allowance = new OutputAllowance(reservation.outputTokens, outputFamily('openai', 'gpt-4o'))
 * allowance.begin()                                 // an item (a chunk) begins
 * allowance.addTo(choice, text)                     // its text, each choice's
 * if (!(await allowance.allows())) cutHere()        // a plain boolean unless it grows; refused: taken back
 */
import type { CatalogueEntry } from '../catalogue/entry.ts'
import { upstreamModelName } from '../config/models.ts'
import { type OutputFamily, outputFamily, outputTokenCount } from '../limits/output-count.ts'
import { isSpace } from '../limits/space.ts'
import type { CutGate } from './stream/types.ts'

/**
 * Asked for more room when an item would take the count to `counted`, past `limit`: resolves to
 * the new limit (at least `limit`; `limit` itself when the rows cannot cover more).
 */
export type GrowOutput = (counted: number, limit: number) => Promise<number>

/** How the answer of `entry`'s model is counted: its provider kind's and upstream model's family. */
export const answerFamily = (entry: CatalogueEntry): OutputFamily =>
  outputFamily(entry.provider.kind, upstreamModelName(entry.model))

/** Tokens of one carried whitespace character, counted alone: once an output family and character. */
const spaces = new Map<OutputFamily, Map<string, number>>()

function spaceTokens(c: string, family: OutputFamily): number {
  let byChar = spaces.get(family)
  if (!byChar) {
    byChar = new Map()
    spaces.set(family, byChar)
  }
  let n = byChar.get(c)
  if (n === undefined) {
    n = outputTokenCount(c, family)
    byChar.set(c, n)
  }
  return n
}

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
  /** The tokens of what `carry` holds, counted alone (as at the end of the text): in the check. */
  private carried = 0
  /** Where the item being counted began (`begin`), for `allows` to take it back when refused. */
  private from = 0
  /**
   * Each stream whose carry the item changed (`undoIndex`), and what it carried before
   * (`undoCarry`, '' for nothing), the first `undone` of each: slots reused, not made an item.
   */
  private readonly undoIndex: number[] = []
  private readonly undoCarry: string[] = []
  private undone = 0
  /** Input tokens of the answer's continuation (DESIGN §10), its prefill included: 0 before one. */
  private continuationPrompt = 0

  constructor(
    /** Output tokens the reservation holds for the whole answer: n × the per-choice cap. */
    limit: number,
    /** How the answering model's text is counted (limits/output-count.ts `outputFamily`). */
    private counting: OutputFamily,
    private grow?: GrowOutput,
    /** With `grow`, the most it may grow to: the cap sent upstream (all choices). */
    private readonly ceiling = limit,
  ) {
    this.max = limit
  }

  /**
   * An attempt (a fallback, a continuation) answering from another model counts as that model's
   * family does from here, what is carried too.
   */
  set family(family: OutputFamily) {
    if (family === this.counting) return
    this.counting = family
    this.carried = 0
    for (const c of this.carry.values()) this.carried += spaceTokens(c, family)
  }

  /**
   * A continuation (DESIGN §10) takes over the answer: its model's `family` counts from here, it
   * may generate `cap` output tokens more, and its prompt of `input` tokens (the relayed text as
   * its prefill included) is the answer's too. The limit is fixed there, no longer grown: the cap
   * was fitted within what the reservation holds, that prompt counted (output-cap.ts
   * `continuationAllowance`), and it is what the continuation was sent. An upstream that ignores
   * it is cut at it, as the first target would have been at its own.
   */
  continueWithin(cap: number, input: number, family: OutputFamily): void {
    this.family = family
    this.max = Math.min(this.max, this.generated + cap)
    this.grow = undefined
    this.continuationPrompt = input
  }

  /** Input tokens of the answer's continuation (`continueWithin`); 0 when there was none. */
  get continuationInput(): number {
    return this.continuationPrompt
  }

  /** Output tokens the answer may reach now: what the reservation holds. */
  get limit(): number {
    return this.max
  }

  /**
   * Output tokens the answer may ever reach: what is held, or while it may grow, the most it may
   * grow to. A cut falls within it (`CallContext.cutWithin`).
   */
  get most(): number {
    return this.grow ? Math.max(this.ceiling, this.max) : this.max
  }

  /** Output tokens counted so far (every `add`), without what is carried. */
  get counted(): number {
    return this.total
  }

  /** The answer was cut here: `allows` said no. */
  get cut(): boolean {
    return this.refused
  }

  /**
   * Output tokens generated so far, what is carried included (an upper bound of what the upstream
   * bills): what was relayed, since a refused item is taken back out.
   */
  get generated(): number {
    return this.total + this.carried
  }

  /** An item (a chunk, an event) begins: what is counted of it until `allows` is taken back if refused. */
  begin(): void {
    this.from = this.total
    this.undone = 0
  }

  /** Counts generated text (of any choice) into the running count; returns the new count. */
  add(text: string): number {
    this.total += outputTokenCount(text, this.counting)
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
      this.setCarry(index, carried, undefined)
    }
    const end = text.length - 1
    if (!finished && end >= 0 && isSpace(text.charCodeAt(end))) {
      this.setCarry(index, this.carry.get(index), text.charAt(end))
      text = text.slice(0, end)
    }
    if (text !== '') this.add(text)
  }

  /** Stream `index` ended: what it carried is counted. */
  end(index: number): void {
    this.addTo(index, '', true)
  }

  /** Stream `index` carries `next` (undefined: nothing) in place of `was`, noted for `takeBack`. */
  private setCarry(index: number, was: string | undefined, next: string | undefined): void {
    this.undoIndex[this.undone] = index
    this.undoCarry[this.undone++] = was ?? ''
    if (was !== undefined) this.carried -= spaceTokens(was, this.counting)
    if (next === undefined) this.carry.delete(index)
    else {
      this.carry.set(index, next)
      this.carried += spaceTokens(next, this.counting)
    }
  }

  /**
   * Whether the item counted since `begin` may be relayed: yes when the count with it (what is
   * carried included) is within the limit; past it, a plain no — or, when the reservation may
   * grow, a promise of the answer. A no takes the item back out of the count (it never reached
   * the client), and is for good.
   */
  allows(): boolean | Promise<boolean> {
    if (this.refused) return this.no()
    const counted = this.total + this.carried
    if (counted <= this.max) return true
    if (!this.grow) return this.no()
    return this.grown(counted)
  }

  /** Asks `grow` for room for `counted`: apart, so `allows` makes no scope for its closures. */
  private grown(counted: number): Promise<boolean> {
    return this.grow!(counted, this.max).then(
      (limit) => {
        this.max = Math.max(this.max, limit)
        return counted <= this.max || this.no()
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
    this.carried = 0
    for (const [index, c] of m.carry) {
      this.carry.set(index, c)
      this.carried += spaceTokens(c, this.counting)
    }
    this.undone = 0
  }

  /** Refused: the item counted since `begin` taken back out of the count, and no for good. */
  private no(): false {
    this.total = this.from
    for (let i = this.undone - 1; i >= 0; i--) {
      const index = this.undoIndex[i]!
      const was = this.undoCarry[i]!
      const now = this.carry.get(index)
      if (now !== undefined) this.carried -= spaceTokens(now, this.counting)
      if (was === '') this.carry.delete(index)
      else {
        this.carry.set(index, was)
        this.carried += spaceTokens(was, this.counting)
      }
    }
    this.undone = 0
    this.from = this.total
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
    protected readonly inputTokens: number,
  ) {}

  /** The allowance ended the answer. */
  get cut(): boolean {
    return this.allowance.cut
  }

  /** The answer's input tokens as counted: the input bound, and a continuation's prompt. */
  get input(): number {
    return this.inputTokens + this.allowance.continuationInput
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
