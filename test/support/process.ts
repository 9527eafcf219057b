/** Real `switchyard serve` processes for multi-process and crash tests. */
import { readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { BUN } from './cli.ts'
import { fitSharedPlans } from './config-doc.ts'
import { mainBundle } from './main-bundle.ts'
import { starts } from './starts.ts'

export interface ServeProcess {
  url: string
  port: number
  pid: number
  proc: ReturnType<typeof Bun.spawn>
  /**
   * Signals `proc`: under the supervisor that is the supervisor, not the serving process. SIGKILL,
   * a clean-up's, ends every process of the server at once — the workers, the serving process
   * and the supervisor — where the supervisor's alone left the serving process to drain (up to
   * its `drain_timeout_s`) and its workers after it. Resolves when `proc` has exited.
   */
  kill(signal?: NodeJS.Signals | number): Promise<number>
  /**
   * kill -9 of the serving process (`pid`), the crash a test of recovery means; resolves when
   * `serve` has exited, with its status (under the supervisor, whatever the supervisor makes of
   * its child's death). crash() kills only the serving process; `kill('SIGKILL')` ends the whole
   * tree (supervisor, serving process and workers) at once.
   */
  crash(): Promise<number>
}

/** Writes a config (JSON is YAML) and returns its path. */
export function writeConfig(dir: string, doc: Record<string, unknown>, name = 'switchyard.yaml'): string {
  const path = join(dir, name)
  writeFileSync(path, JSON.stringify(fitSharedPlans(doc), null, 2))
  return path
}

/**
 * The environment under which `serve` runs without its supervisor: it starts itself again only to
 * set Bun's fetch connection cap (`superviseWithEnv`, src/cli/process.ts), so with the cap set
 * (here to the value it sets by default, `server.max_upstream_connections`) the gateway is the
 * same serving process without a second start-up (~0.3 s of CPU). For tests whose subject is not
 * the supervisor nor the signals it counts.
 */
export const UNSUPERVISED = { BUN_CONFIG_MAX_HTTP_REQUESTS: '4096' }

/**
 * Runs the bundled CLI (main-bundle.ts): the code `bun src/main.ts` runs, without transpiling it
 * again in every process. `env` is added to this process's; `detached` starts it in a process group of its own (its pid is
 * the group's), as a shell starts a job, so a test can signal the whole group as Ctrl-C does.
 * `wrap`: a command that runs it, exec'ing it in its own place (`setpriv …  --`: the pid stays).
 */
export async function spawnServe(
  args: string[],
  opts: { env?: Record<string, string>; detached?: boolean; wrap?: string[] } = {},
): Promise<ServeProcess> {
  starts.serves++
  const proc = Bun.spawn([...(opts.wrap ?? []), BUN, await mainBundle(), 'serve', '--json', ...args], {
    stdout: 'pipe',
    stderr: 'pipe',
    env: { ...process.env, ...opts.env },
    detached: opts.detached ?? false,
  })
  const reader = proc.stdout.getReader()
  let text = ''
  while (!text.includes('\n')) {
    const { value, done } = await reader.read()
    if (done) {
      // The status too: a `serve` signalled from outside before it set its handlers (Bun SIGTERMs a
      // timed-out test's processes) has written nothing to stderr.
      const stderr = await new Response(proc.stderr).text()
      await proc.exited
      throw new Error(`serve exited (${proc.signalCode ?? `code ${proc.exitCode}`}): ${stderr}`)
    }
    text += new TextDecoder().decode(value)
  }
  reader.releaseLock()
  const info = JSON.parse(text.split('\n')[0]!)
  return {
    url: info.url,
    port: info.port,
    pid: info.pid,
    proc,
    async kill(signal = 'SIGTERM') {
      // Only while `proc` runs and the serving process is still it or its child: a pid that
      // exited may be another process's by now.
      const ours = info.pid === proc.pid || parentPid(info.pid) === proc.pid
      const running = proc.exitCode === null && proc.signalCode === null
      if ((signal === 'SIGKILL' || signal === 9) && running && ours) {
        // Children first: once the serving process is gone they are another parent's.
        for (const pid of [...childPids(info.pid), info.pid]) killQuietly(pid)
      }
      proc.kill(signal)
      return proc.exited
    },
    async crash() {
      process.kill(info.pid, 'SIGKILL')
      return proc.exited
    },
  }
}

/** The pids of `pid`'s children, from /proc (every thread's list); none once it has exited. */
function childPids(pid: number): number[] {
  const out: number[] = []
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const list = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim()
      if (list) out.push(...list.split(/\s+/).map(Number))
    }
  } catch {
    // exited (or a kernel without the children files): nothing more to end here
  }
  return out
}

/** The parent's pid of `pid` (from /proc), or 0 once it has exited. */
function parentPid(pid: number): number {
  try {
    // The fourth field, after the name in parentheses (which may itself hold spaces).
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
  } catch {
    return 0
  }
}

/** SIGKILL to a process that may have exited already. */
function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL')
  } catch {
    // already gone
  }
}

/** Child processes of `pid` (from /proc), with their command lines. */
export async function childProcesses(pid: number): Promise<Array<{ pid: number; cmd: string }>> {
  const out = await new Response(
    Bun.spawn(['ps', '--ppid', String(pid), '-o', 'pid=,args='], { stdout: 'pipe' }).stdout,
  ).text()
  return out
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const m = /^\s*(\d+)\s+(.*)$/.exec(l)!
      return { pid: Number(m[1]), cmd: m[2]! }
    })
}

/**
 * How many TCP connections accepted on `port` process `pid` holds open (ESTABLISHED), read from
 * /proc: the sockets in its fd table against the kernel's tables (/proc/net/tcp and tcp6, the
 * local address's port in hex, the state 01, the inode tenth column). With `--workers N` the kernel
 * hands each new connection to one of the processes on the port; this says which got one.
 */
export function connectionsOn(pid: number, port: number): number {
  const inodes = new Set<string>()
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    const m = /^socket:\[(\d+)\]$/.exec(safeReadlink(`/proc/${pid}/fd/${fd}`))
    if (m) inodes.add(m[1]!)
  }
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0')
  let n = 0
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/)
      if (f.length > 9 && f[1]!.endsWith(`:${hexPort}`) && f[3] === '01' && inodes.has(f[9]!)) n++
    }
  }
  return n
}

/** An fd closed between listing and reading it reads as nothing. */
function safeReadlink(path: string): string {
  try {
    return readlinkSync(path)
  } catch {
    return ''
  }
}

/**
 * How many SQLite connections process `pid` holds on the database file `path` (each opens the
 * file once; its -wal and -shm are other paths). A serving gateway has three: the event loop's,
 * the checkpoint thread's and the usage writer thread's.
 */
export function databaseConnections(pid: number, path: string): number {
  return readdirSync(`/proc/${pid}/fd`).filter((fd) => safeReadlink(`/proc/${pid}/fd/${fd}`) === path).length
}
