/** Runs CLI commands in-process with captured stdout/stderr, or as a real subprocess. */
import { run } from '../../src/main.ts'

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
