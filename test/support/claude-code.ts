/**
 * @module
 * Runs the real Claude Code CLI (from the separate test package `test/clients`, which `.ci/run`
 * installs) in print mode against a gateway on 127.0.0.1. It gets a fresh HOME, every kind of
 * non-essential traffic switched off, and a proxy on a closed local port for anything that is not
 * 127.0.0.1, so it can talk to nothing but the gateway.
 *
 * @example
 * if (CLAUDE) { const run = await runClaude(gw.url, key, 'say hi', 'demo/agent'); run.stdout }
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from './config-doc.ts'

const BIN = join(import.meta.dir, '..', 'clients', 'node_modules', '.bin', 'claude')

/** The CLI's path, or null (and a printed line saying so) when the test package is not installed. */
export const CLAUDE: string | null = existsSync(BIN) ? BIN : null

export function reportClaudeAbsent(tests: string): void {
  if (!CLAUDE) {
    console.log(`Claude Code is not installed (npm install --prefix test/clients): skipping ${tests}.`)
  }
}

export interface ClaudeRun {
  code: number
  stdout: string
  stderr: string
}

export async function runClaude(
  baseUrl: string,
  key: string,
  prompt: string,
  model: string,
  extraArgs: string[] = [],
): Promise<ClaudeRun> {
  const home = tempDir('switchyard-claude-')
  const proc = Bun.spawn([CLAUDE!, '-p', prompt, '--model', model, ...extraArgs], {
    cwd: home,
    stdout: 'pipe',
    stderr: 'pipe',
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home,
      ANTHROPIC_BASE_URL: baseUrl,
      ANTHROPIC_AUTH_TOKEN: key,
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_BUG_COMMAND: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      // Anything but the gateway goes to a closed port.
      HTTPS_PROXY: 'http://127.0.0.1:1',
      HTTP_PROXY: 'http://127.0.0.1:1',
      NO_PROXY: '127.0.0.1,localhost',
    },
  })
  const timer = setTimeout(() => proc.kill(), 90_000)
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ])
  clearTimeout(timer)
  return { code, stdout, stderr }
}
