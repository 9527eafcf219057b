/**
 * @module
 * Large request bodies' memory back at a bounded lag (DESIGN §16: a body costs about its own size
 * while in flight). A body is held as one string (its parsed value's long strings are views of it:
 * `json/shared-strings.ts`), and a string's memory goes back only when the collector finds it dead.
 * JavaScriptCore collects lazily, and a body outlives the young generation's collections (it lives
 * as long as its request), so dead bodies piled up: 16 concurrent 5 MB bodies, three rounds, grew
 * a process by 2.1–2.4 × the bytes in flight with the body held once, 1.1–1.3 × with a full
 * collection after every 16 MB read. So one full collection once the large bodies read since the
 * last one pass a quarter of those in flight (at least `COLLECT_MIN`): the dead bodies held stay
 * near a quarter of the live ones. (The buffer a body was read into is dead too once decoded, and
 * also goes only when collected: counting it, twice a body's characters, was tried — the valid
 * flood of test/e2e/hostile/hostile-memory.test.ts 1.09–1.15 × the bytes in flight against
 * 1.07–1.36 ×, the bench's valid rows no lower, at 6–13 ms more CPU a 10 MB body: not kept.) The
 * price is CPU: a collection takes 10–25 ms with the
 * tokenizer's tables loaded (a loaded 2-core machine), so that flood's requests cost 23–28 ms of
 * CPU each against 17–20 ms without (0.8–0.9 × the bytes in flight against 1.8–2.1 × on chat).
 * Bodies under `LARGE_BODY` are not counted: they die young, and normal traffic never pays.
 *
 * @example
 * const bodies = new LargeBodies()
 * const counted = bodies.read(text.length) // may collect
 * // ... the request runs ...
 * bodies.done(counted)
 */

/** Bodies of this many characters or more are counted. */
export const LARGE_BODY = 1024 * 1024

/** Characters of large bodies read between two collections, at the least. */
export const COLLECT_MIN = 16 * 1024 * 1024

export class LargeBodies {
  /** Characters of large bodies read since the last collection, and of those still in flight. */
  private since = 0
  private inFlight = 0

  constructor(private readonly collect: () => void = () => Bun.gc(true)) {}

  /**
   * A body of `chars` characters was read (and the buffer it was read into let go: dead, but not
   * counted, see above). Returns what was counted of it (0: not a large body), to hand to `done`
   * when its request ends.
   */
  read(chars: number): number {
    if (chars < LARGE_BODY) return 0
    this.inFlight += chars
    this.since += chars
    if (this.since >= Math.max(COLLECT_MIN, this.inFlight / 4)) {
      this.since = 0
      this.collect()
    }
    return chars
  }

  /** The request of a body `read` counted ended. */
  done(counted: number): void {
    this.inFlight -= counted
  }
}
