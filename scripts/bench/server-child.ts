/**
 * @module
 * The bench's server children (the gateway's `serve --json`, the bare prototype, the bench's own
 * servers): started, checked healthy, stopped — and killed if the bench exits first.
 */
import type { Subprocess } from 'bun'

/** A server child of the bench's: what it printed when ready, the process, and how to stop it. */
export interface Served<T> {
  info: T
  proc: Subprocess
  /** SIGTERM, then SIGKILL after 10 s; resolves once it has exited (at once if it had). */
  stop(): Promise<void>
}

/**
 * Starts a server child that prints one JSON line when it listens (the gateway's `serve --json`,
 * the bench's own servers), then, given `health`, waits for that URL to answer 200. A child that
 * exits, prints something else or never gets healthy within 30 s is killed and the start throws
 * with its exit code and where its stderr went: no bench goes on against a server that is not up,
 * and none leaves one running behind a failed start. One still running when the bench exits (a
 * throw past its `finally`, a script without one) is killed then, with the server it forked.
 */
export async function startServer<T>(
  cmd: string[],
  opts: {
    cwd?: string
    env?: Record<string, string>
    /** A file for the child's stderr (its log); else inherited. */
    stderr?: string
    /** The URL that answers 200 once the server takes requests (`/healthz`). */
    health?: (info: T) => string
  } = {},
): Promise<Served<T>> {
  const proc = Bun.spawn(cmd, {
    cwd: opts.cwd,
    stdout: 'pipe',
    stderr: opts.stderr ? Bun.file(opts.stderr) : 'inherit',
    stdin: 'ignore',
    env: { ...process.env, ...opts.env },
  })
  live.add(proc)
  void proc.exited.then(() => live.delete(proc))
  if (!killingAtExit) {
    killingAtExit = true
    process.once('exit', () => {
      for (const p of live) p.kill('SIGKILL')
      for (const pid of forked) killPid(pid)
    })
  }
  const stop = async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return
    proc.kill('SIGTERM')
    const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000)
    await proc.exited
    clearTimeout(timer)
  }
  const deadline = Date.now() + 30_000
  const line = await firstLine(proc.stdout, 30_000)
  let server: number | null = null
  try {
    const info = JSON.parse(line) as T
    // `serve` re-runs itself to set its environment: the server is its child, named in the line.
    const pid = (info as { pid?: number }).pid
    if (pid !== undefined && pid !== proc.pid) {
      server = pid
      forked.add(pid)
      void proc.exited.then(() => forked.delete(pid))
    }
    if (opts.health) await healthy(opts.health(info), deadline, proc)
    return { info, proc, stop }
  } catch (e) {
    proc.kill('SIGKILL')
    if (server !== null) killPid(server)
    await proc.exited
    const where = opts.stderr ? `; see ${opts.stderr}` : ''
    throw new Error(
      `${cmd.slice(0, 3).join(' ')} did not start (exit ${proc.exitCode ?? proc.signalCode}, stdout ${JSON.stringify(line.slice(0, 200))}): ${(e as Error).message}${where}`,
    )
  }
}

/** The server children running, and the servers they forked: killed if the bench exits first. */
const live = new Set<Subprocess>()
const forked = new Set<number>()
let killingAtExit = false

function killPid(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL')
  } catch {} // gone already
}

async function healthy(url: string, deadline: number, proc: Subprocess): Promise<void> {
  for (;;) {
    if (proc.exitCode !== null) throw new Error('exited before it was healthy')
    const status = await fetch(url).then(
      async (r) => {
        await r.arrayBuffer()
        return r.status
      },
      () => 0,
    )
    if (status === 200) return
    if (Date.now() > deadline) throw new Error(`${url} answered ${status || 'nothing'} for 30 s`)
    await Bun.sleep(20)
  }
}

/** Reads one line from a child's stdout (leaves the rest unread), within `ms`. */
export async function firstLine(stream: ReadableStream<Uint8Array>, ms: number): Promise<string> {
  const reader = stream.getReader()
  const dec = new TextDecoder()
  let text = ''
  const deadline = Date.now() + ms
  while (!text.includes('\n') && Date.now() < deadline) {
    const r = await Promise.race([
      reader.read(),
      Bun.sleep(Math.max(1, deadline - Date.now())).then(() => null),
    ])
    if (!r || r.done) break
    text += dec.decode(r.value, { stream: true })
  }
  reader.releaseLock()
  return text.split('\n')[0] ?? ''
}
