/**
 * @module
 * Time for the stream deadlines, injectable: the real scheduler is `performance.now` and
 * `setTimeout`; tests pass a `ManualScheduler` and move its clock, so waiting for a keep-alive,
 * the hold or an idle timeout costs no real time.
 *
 * @example
 * const timer = scheduler.timer(() => check())
 * timer.at(scheduler.now() + 15_000)   // re-arming replaces the previous time
 * timer.cancel()
 */

/** A single re-armable timer. */
export interface Timer {
  /** Fire once at `time` (a `now()` value), replacing any earlier arming. */
  at(time: number): void
  cancel(): void
}

export interface Scheduler {
  /** Milliseconds, monotonic. */
  now(): number
  timer(fire: () => void): Timer
}

class RealTimer implements Timer {
  private handle: ReturnType<typeof setTimeout> | undefined
  constructor(private readonly fire: () => void) {}
  at(time: number): void {
    if (this.handle !== undefined) clearTimeout(this.handle)
    this.handle = setTimeout(this.run, Math.max(0, time - performance.now()))
  }
  cancel(): void {
    if (this.handle !== undefined) clearTimeout(this.handle)
    this.handle = undefined
  }
  private readonly run = (): void => {
    this.handle = undefined
    this.fire()
  }
}

/**
 * One timer for a whole request, whose action passes from owner to owner: `upstreamFetch` holds it
 * for the first byte, then the stream writer for the hold, keep-alive, idle and total deadlines.
 */
export class Deadline implements Timer {
  private fire: () => void = noop
  private readonly timer: Timer
  /** When the attempt it times began (the scheduler's clock): its time to first token counts from here. */
  readonly startedAt: number

  constructor(readonly scheduler: Scheduler) {
    this.timer = scheduler.timer(() => this.fire())
    this.startedAt = scheduler.now()
  }

  /** Takes the timer over, disarmed: `fire` runs when it next falls due. */
  own(fire: () => void): Timer {
    this.timer.cancel()
    this.fire = fire
    return this
  }

  at(time: number): void {
    this.timer.at(time)
  }

  cancel(): void {
    this.timer.cancel()
  }
}

const noop = (): void => {}

export const realScheduler: Scheduler = {
  now: () => performance.now(),
  timer: (fire) => new RealTimer(fire),
}

/**
 * A clock that moves only when told: `advance(ms)` fires, in time order, every timer due by then
 * (with `now()` at each timer's time), letting promise callbacks run between them.
 */
export class ManualScheduler implements Scheduler {
  private time = 0
  private readonly armed = new Map<ManualTimer, number>()

  now(): number {
    return this.time
  }

  timer(fire: () => void): Timer {
    return new ManualTimer(fire, this.armed)
  }

  /** Resolves when the clock has moved `ms` on (for scripted sources in tests). */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.timer(resolve).at(this.time + ms))
  }

  /** Moves the clock forward by `ms`, firing what falls due. */
  async advance(ms: number): Promise<void> {
    const until = this.time + ms
    for (;;) {
      await settle()
      let next: ManualTimer | undefined
      let nextAt = Number.POSITIVE_INFINITY
      for (const [t, at] of this.armed) if (at < nextAt) [next, nextAt] = [t, at]
      if (next === undefined || nextAt > until) break
      this.time = Math.max(this.time, nextAt)
      this.armed.delete(next)
      next.fire()
    }
    this.time = until
    await settle()
  }
}

class ManualTimer implements Timer {
  constructor(
    readonly fire: () => void,
    private readonly armed: Map<ManualTimer, number>,
  ) {}
  at(time: number): void {
    this.armed.set(this, time)
  }
  cancel(): void {
    this.armed.delete(this)
  }
}

/** Lets pending promise reactions (and a macrotask's worth of stream plumbing) run. */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}
