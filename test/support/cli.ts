/** Runs CLI commands in-process with captured stdout/stderr, or as a real subprocess. */
import { run } from '../../src/main.ts'
import { mainBundle } from './main-bundle.ts'
import { starts } from './starts.ts'

export interface CliResult {
  code: number
  stdout: string
  stderr: string
  json<T = any>(): T
}

export async function cli(args: string[], env: Record<string, string | undefined> = {}): Promise<CliResult> {
  let stdout = ''
  let stderr = ''
  const code = await run(args, {
    out: (t) => {
      stdout += t.endsWith('\n') ? t : `${t}\n`
    },
    err: (t) => {
      stderr += t.endsWith('\n') ? t : `${t}\n`
    },
    env: { ...env },
  })
  return { code, stdout, stderr, json: () => JSON.parse(stdout) }
}

export const REPO = new URL('../..', import.meta.url).pathname
export const BUN = process.execPath

/**
 * The CLI as a real process (bundled once: main-bundle.ts), from `cwd`; killed after `timeoutMs` (a `serve` that should have
 * refused its arguments would otherwise listen for ever).
 */
export async function cliProcess(
  args: string[],
  opts: { cwd?: string; env?: Record<string, string | undefined>; timeoutMs?: number } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  if (args[0] === 'serve') starts.serves++
  const proc = Bun.spawn([BUN, await mainBundle(), ...args], {
    cwd: opts.cwd ?? REPO,
    env: { ...process.env, ...opts.env },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
    timeout: opts.timeoutMs ?? 15_000,
  })
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ])
  return { code, stdout, stderr }
}
