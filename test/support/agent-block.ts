/**
 * @module
 * Runs a coding agent's setup from docs/agents.md as pasted: the section's `sh` block (its exports,
 * then the agent's command) through `sh -c`, with the page's address (`http://127.0.0.1:8080`)
 * and key (`sk-sy-...`) replaced by the test gateway's, in a throw-away HOME and working folder
 * (a `json` block of the section, when given, written there under its file name). The agent's
 * command line gets the test's arguments appended; the prompt reaches it in `$PROMPT` or on stdin.
 * With `trace`, under strace (when installed), `connects` lists every AF_INET/AF_INET6 connect(2) of the whole
 * process tree — DNS resolvers included — so a test proves the block alone keeps the agent on
 * 127.0.0.1; without strace every non-loopback address goes to a closed local port instead.
 *
 * @example
 * const run = await runAgentBlock({ block, gateway: gw.url, key, args: '"$PROMPT"', prompt: 'say hi' })
 */
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from './config-doc.ts'

const CLIENT_BIN = new URL('../clients/node_modules/.bin/', import.meta.url).pathname

/** An agent's executable in the test-client package, or null when it is not installed. */
export function clientBinary(name: string): string | null {
  const path = join(CLIENT_BIN, name)
  return existsSync(path) ? path : null
}

/** The first fenced block of `lang` in the `### heading` section of docs/agents.md. */
export async function agentsBlock(heading: string, lang: string): Promise<string> {
  const page = await Bun.file(new URL('../../docs/agents.md', import.meta.url)).text()
  const from = page.indexOf(`### ${heading}\n`)
  const to = page.indexOf('\n#', from + 4)
  const section = page.slice(from, to < 0 ? undefined : to)
  const m = new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``).exec(section)
  if (from < 0 || !m) throw new Error(`docs/agents.md: no \`\`\`${lang} block under ### ${heading}`)
  return m[1]!
}

/** The page's placeholders, as a newcomer replaces them. */
export function localise(text: string, gateway: string, key: string, model?: string): string {
  const out = text.replaceAll('http://127.0.0.1:8080', gateway).replaceAll('sk-sy-...', key)
  return model ? out.replaceAll('demo/agent', model) : out
}

export interface AgentRun {
  code: number
  stdout: string
  stderr: string
  /** `ip:port` of every IP connect(2), when run under strace; else null. */
  connects: string[] | null
  /** What `readHome` read, when given. */
  home?: string
}

export interface AgentBlockOptions {
  /** The `sh` block, already localised; its last line is the agent's command. */
  block: string
  /** Appended to the block's last line (shell words; `"$PROMPT"` is the prompt). */
  args: string
  prompt: string
  /** The prompt on stdin too (opencode's `run` reads it there without quoting it). */
  stdin?: boolean
  /** Files written into the working folder first (`opencode.json`). */
  files?: Record<string, string>
  timeoutMs?: number
  /** Under strace, when installed (it slows the agent down: a test traces one run per agent). */
  trace?: boolean
  /** Added to the agent's environment (the runner's own settings, never the block's). */
  env?: Record<string, string>
  /** Reads what the agent left in its HOME once it has exited, before the folder goes (`home` in the run). */
  readHome?: (home: string) => string
  /**
   * Runs beside the agent (its HOME and working folder; `exited` settles when it ends), awaited
   * before the run returns: to let the agent go on only once something has happened.
   */
  meanwhile?: (dirs: { home: string; work: string }, exited: Promise<number>) => Promise<void>
}

const DEAD_PROXY = 'http://127.0.0.1:9'

export async function runAgentBlock(opts: AgentBlockOptions): Promise<AgentRun> {
  const home = tempDir('switchyard-agent-home-')
  const work = tempDir('switchyard-agent-work-')
  for (const [name, text] of Object.entries(opts.files ?? {})) await Bun.write(join(work, name), text)
  const lines = opts.block.trimEnd().split('\n')
  lines[lines.length - 1] = `${lines.at(-1)} ${opts.args}`
  const script = lines.join('\n')
  const traceFile = join(home, 'connect.trace')
  const strace = opts.trace ? Bun.which('strace') : null
  const sh = ['sh', '-c', script]
  const cmd = strace ? tracingConnects(sh, traceFile) : sh
  // Without strace to prove it, anything but loopback meets a closed port.
  const proxy = strace
    ? {}
    : { HTTPS_PROXY: DEAD_PROXY, HTTP_PROXY: DEAD_PROXY, NO_PROXY: '127.0.0.1,localhost' }
  try {
    const proc = Bun.spawn(cmd, {
      cwd: work,
      env: {
        PATH: `${CLIENT_BIN}:${process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin'}`,
        HOME: home,
        PROMPT: opts.prompt,
        ...proxy,
        ...opts.env,
      },
      stdin: opts.stdin ? new Blob([opts.prompt]) : 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
      timeout: opts.timeoutMs ?? 120_000,
    })
    const [stdout, stderr, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
      opts.meanwhile?.({ home, work }, proc.exited),
    ])
    const connects = strace ? readConnects(traceFile) : null
    return { code, stdout, stderr, connects, home: opts.readHome?.(home) }
  } finally {
    rmSync(home, { recursive: true, force: true })
    rmSync(work, { recursive: true, force: true })
  }
}

/**
 * `cmd` under strace (installed: `Bun.which('strace')`), every AF_INET/AF_INET6 connect(2) of its
 * process tree written to `traceFile` for readConnects. --seccomp-bpf: the kernel stops the tracee
 * at connect(2) alone; without it strace stops it at every system call and filters them itself —
 * an agent's whole start-up, twice over.
 */
export function tracingConnects(cmd: string[], traceFile: string): string[] {
  const strace = Bun.which('strace') ?? 'strace'
  return [strace, '-f', '-qq', '--seccomp-bpf', '-e', 'trace=connect', '-o', traceFile, ...cmd]
}

/** `ip:port` of every IP connect(2) in a tracingConnects trace. */
export function readConnects(file: string): string[] {
  const out: string[] = []
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const v4 = /sa_family=AF_INET, sin_port=htons\((\d+)\), sin_addr=inet_addr\("([^"]+)"\)/.exec(line)
    if (v4) out.push(`${v4[2]}:${v4[1]}`)
    const v6 = /sa_family=AF_INET6, sin6_port=htons\((\d+)\).*inet_pton\(AF_INET6, "([^"]+)"/.exec(line)
    if (v6) out.push(`[${v6[2]}]:${v6[1]}`)
  }
  return out
}
