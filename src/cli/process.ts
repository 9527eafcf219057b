/**
 * @module
 * Process plumbing for `serve`: re-running this program (source or compiled binary) and tying a
 * child's life to its parent's.
 */
import type { Logger } from '../util/log.ts'
import { forceExit, onStopSignals } from './signals.ts'

/** argv that starts this same program again: the binary alone, or `bun src/main.ts`. */
export function selfCommand(): string[] {
  // In a compiled binary Bun.main is inside the embedded filesystem and execPath is the binary.
  return Bun.main.startsWith('/$bunfs/') ? [process.execPath] : [process.execPath, Bun.main]
}

/**
 * A child keeps its stdin open to the parent: when the parent dies, even by SIGKILL, the pipe
 * closes and `gone` is called — the child must not serve on alone. It stops as on SIGTERM (no new
 * requests, those in flight finished, usage flushed) rather than exit on the spot: nothing killed
 * it, and an exit here cut its streams and lost the usage it had not written yet.
 */
export function exitWithParent(gone: () => void): void {
  ;(async () => {
    for await (const _ of process.stdin) {
      // nothing is ever sent; the loop ends when the parent goes away
    }
    gone()
  })()
}

/**
 * Bun's fetch reads its connection cap (`BUN_CONFIG_MAX_HTTP_REQUESTS`, default 256) once, from
 * the environment the process started with; setting it later has no effect. So `serve` runs
 * itself again with the variable set and waits, forwarding signals. Returns the exit code.
 * A second SIGINT or SIGTERM forces the stop (`signals.ts`): the serving process is killed (its
 * workers exit with it, their stdin closed) and this one exits 130 or 143.
 */
export async function superviseWithEnv(env: Record<string, string>, log: Logger): Promise<number> {
  const child = Bun.spawn([...selfCommand(), ...process.argv.slice(2)], {
    env: { ...process.env, ...env, SWITCHYARD_SUPERVISED: '1' },
    stdin: 'pipe',
    stdout: 'inherit',
    stderr: 'inherit',
  })
  let forced = false
  onStopSignals({
    graceful: (signal) => child.kill(signal),
    forced: (signal) => {
      forced = true
      void forceExit(log, signal, () => {
        child.kill('SIGKILL')
        return child.exited
      })
    },
  })
  process.on('SIGHUP', () => child.kill('SIGHUP'))
  const code = await child.exited
  // Killed by the forced stop: forceExit exits with the signal's status, not the kill's 137.
  if (forced) await new Promise(() => {})
  return code
}

/**
 * Output that cannot be written ends the command plainly, not with a stack trace: a reader that
 * went away (`| head`, a closed pipe) quietly with 141, SIGPIPE's status as coreutils have it; any
 * other failure (a full disk) in one line, exit 1.
 */
export function exitOnBrokenOutput(): void {
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(141)
    process.stderr.write(`error: cannot write the output: ${err.message}\n`)
    process.exit(1)
  })
}
