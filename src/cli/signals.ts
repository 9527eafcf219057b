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
 */
import type { Logger } from '../util/log.ts'

const NUMBER = { SIGINT: 2, SIGTERM: 15 } as const
export type StopSignal = keyof typeof NUMBER

/** The exit status of a stop forced by `signal`. */
export function forcedExitCode(signal: StopSignal): number {
  return 128 + NUMBER[signal]
}

/**
 * Calls `graceful` on the first SIGINT or SIGTERM and on every later one, unless `forced` is
 * given: then a later one calls `forced` instead.
 *
 * @example
 * onStopSignals({ graceful: () => void drainAndExit(0), forced: (s) => void forceExit(log, s, killChildren) })
 */
export function onStopSignals(on: {
  graceful: (signal: StopSignal) => void
  forced?: (signal: StopSignal) => void
}): void {
  let seen = false
  for (const signal of Object.keys(NUMBER) as StopSignal[]) {
    process.on(signal, () => {
      if (seen && on.forced) return on.forced(signal)
      seen = true
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
