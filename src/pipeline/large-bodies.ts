/**
 * @module
 * Large request bodies' memory back at a bounded lag (DESIGN §16: a body costs about its own size
 * while in flight). A body is held as one string (its parsed value's long strings are views of it:
 * `json/shared-strings.ts`), and a string's memory goes back only when the collector finds it dead.
 * JavaScriptCore collects lazily, and a body outlives the young generation's collections (it lives
 * as long as its request), so dead bodies piled up: 16 concurrent 5 MB bodies, three rounds, grew
 * a process by 2.1–2.4 × the bytes in flight with the body held once, 1.1–1.3 × with a full
 * collection after every 16 MB read.
 *
 * So one full collection once the large bodies whose requests ended since the last one pass a
 * quarter of those still in flight (at least `COLLECT_MIN`): the dead bodies held stay near a
 * quarter of the live ones. Counted as they end, not as they are read: requests end in bursts (16
 * refused at once when their admissions come back together; 16 forwarded answered together), and
 * a count of reads left a burst's bodies dead until more bodies had been read — while the same
 * clients' next bodies arrived, so the dead and the arriving were held at once (the test's chat
 * flood up to 1.7 × the bytes in flight under load). The collection runs on the next turn
 * (`setImmediate`), once for all the requests that ended in this one, when their texts are no
 * longer on a stack — or sooner, once `COLLECT_MIN` of them are dead, when a request is about to
 * read its body (`reading`) or has read a large one (`read`): on a quiet host that turn came only
 * after several more bodies had been read (their pieces resolve as microtasks, ahead of it), and
 * the embeddings flood held a burst's 96 MB dead while four more 8 MB bodies arrived (+201–227 MB
 * for 128 MB in flight). (The buffer a body was read into is not counted: it is detached once decoded
 * (`body.ts`), and its memory is taken again by the next allocation, measured — only the process's
 * RSS does not show it given back.) The price is CPU: a collection took 10–25 ms when the old
 * tokenizer's strings were on the heap to mark (a loaded 2-core machine); o200k's typed-array
 * table adds next to nothing (a bare process's full collection: ~1 ms). One per `COLLECT_MIN` of
 * bodies at the least, as many as when reads were counted. Bodies under `LARGE_BODY` are not
 * counted: they die young, and normal traffic never pays.
 *
 * @example
 * const bodies = new LargeBodies()
 * bodies.reading() // collects the dead ones now, if COLLECT_MIN of them, before the body is read
 * const counted = bodies.read(text.length)
 * // ... the request runs ...
 * bodies.done(counted) // may collect, on the next turn
 */

/** Bodies of this many characters or more are counted. */
export const LARGE_BODY = 1024 * 1024

/** Characters of large bodies ended between two collections, at the least. */
export const COLLECT_MIN = 16 * 1024 * 1024

export class LargeBodies {
  /** Characters of large bodies in flight, and of those whose requests ended since the last collection. */
  private inFlight = 0
  private dead = 0
  /** A collection is due on the next turn. */
  private due = false

  constructor(
    private readonly collect: () => void = () => Bun.gc(true),
    private readonly later: (run: () => void) => void = setImmediate,
  ) {}

  /**
   * A body of `chars` characters was read. Returns what was counted of it (0: not a large body), to
   * hand to `done` when its request ends.
   */
  read(chars: number): number {
    if (chars < LARGE_BODY) return 0
    this.reading()
    this.inFlight += chars
    return chars
  }

  /** The request of a body `read` counted ended: its body is dead (a stream's view may outlive it). */
  done(counted: number): void {
    if (counted === 0) return
    this.inFlight -= counted
    this.dead += counted
    if (this.due || this.dead < Math.max(COLLECT_MIN, this.inFlight / 4)) return
    this.due = true
    this.later(this.collectDead)
  }

  /**
   * A request is about to read its body, or has read a large one: the bodies ended since the last
   * collection are collected now once they pass `COLLECT_MIN` — not a quarter of those in flight,
   * as `done` waits for, since a body arriving is what they would be held beside; and not on the
   * next turn, which may come only after several more bodies are read (their pieces resolve as
   * microtasks, ahead of `setImmediate`).
   */
  reading(): void {
    if (this.dead < COLLECT_MIN) return
    this.due = true
    this.collectDead()
  }

  /**
   * Every body counted as ended before it ran is collectable by then, but for a stream's, whose
   * answer may still hold a view of it (those the next collection after the stream ends takes):
   * counted from zero again. Once per `due`: the turn's call finds nothing to do when a read ran it.
   */
  private readonly collectDead = (): void => {
    if (!this.due) return
    this.due = false
    this.dead = 0
    this.collect()
  }
}
