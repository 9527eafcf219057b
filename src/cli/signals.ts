/**
 * @module
 * How `serve` stops on a signal: the first SIGINT or SIGTERM drains (a graceful stop, exit 0); a
 * second one stops at once, cutting what is in flight, after a log line saying the stop was
 * forced, and exits 128 + the signal's number (130 for SIGINT, 143 for SIGTERM), as a shell
 * reports a process a signal ended.
 *
 * Only the process the operator started counts signals: the supervisor (`superviseWithEnv`), or
 * the serving process when it runs without one. A terminal's Ctrl-C reaches every process of its
 * group at once and the supervisor forwards it besides, so the serving process and its workers
 * get one Ctrl-C twice: they drain on every signal and are ended by the process above them.
 *
 * One Ctrl-C can reach the counting process twice as well: a script runner (`bun run start`)
 * forwards the terminal's SIGINT to its child, which had it from the terminal already. So a
 * second signal within `SAME_STOP_MS` of the first is the same stop, not a second one; a person
 * who means to force it presses again after that.
 */
import type { Logger } from '../util/log.ts'

const NUMBER = { SIGINT: 2, SIGTERM: 15 } as const
/** Signals this close after the first are one stop (measured: a forward arrives within a few ms). */
const SAME_STOP_MS = 300
export type StopSignal = keyof typeof NUMBER

/** The exit status of a stop forced by `signal`. */
export function forcedExitCode(signal: StopSignal): number {
  return 128 + NUMBER[signal]
}

/**
 * Calls `graceful` on the first SIGINT or SIGTERM and on every later one, unless `forced` is
 * given: then one later than `SAME_STOP_MS` after the first calls `forced` instead (one sooner is
 * the same stop arriving twice, and ignored).
 *
 * @example
 * onStopSignals({ graceful: () => void drainAndExit(0), forced: (s) => void forceExit(log, s, killChildren) })
 */
export function onStopSignals(on: {
  graceful: (signal: StopSignal) => void
  forced?: (signal: StopSignal) => void
}): void {
  let first: number | null = null
  for (const signal of Object.keys(NUMBER) as StopSignal[]) {
    process.on(signal, () => {
      const now = performance.now()
      if (first !== null && on.forced) {
        if (now - first < SAME_STOP_MS) return
        return on.forced(signal)
      }
      first ??= now
      on.graceful(signal)
    })
  }
}

/**
 * Logs the forced stop, ends the processes below (`end` kills them with SIGKILL and resolves once
 * they have exited, so none is left unreaped; waited for 1 s at most), and exits.
 */
export async function forceExit(
  log: Logger,
  signal: StopSignal,
  end: () => Promise<unknown>,
): Promise<never> {
  log.warn('stop forced by a second signal: requests in flight are cut, unflushed usage is lost', {
    signal,
    pid: process.pid,
    exit_code: forcedExitCode(signal),
  })
  await Promise.race([end(), Bun.sleep(1_000)])
  process.exit(forcedExitCode(signal))
}
