/**
 * @module
 * Runs the real Codex CLI (`@openai/codex`, installed in the separate test-client package
 * `test/clients/`, never a product dependency) against a gateway: `codex exec` with a custom model
 * provider (`wire_api = "responses"`, key from an environment variable), a throw-away CODEX_HOME,
 * and every non-loopback connection sent to a closed local port (proxy variables with
 * `NO_PROXY=127.0.0.1`), so it talks only to 127.0.0.1 (readme-commands.test.ts proves it under
 * strace, on the README's one-liner).
 *
 * @example
 * const codex = codexBinary()
 * if (!codex) console.log('Codex is not installed: skipping')
 * const run = await runCodex(codex, { baseUrl: `${gw.url}/v1`, key, model: 'demo/echo', prompt: 'hi' })
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const BIN = new URL('../clients/node_modules/.bin/codex', import.meta.url).pathname

/** The Codex executable, or null when the test clients are not installed. */
export function codexBinary(): string | null {
  return existsSync(BIN) ? BIN : null
}

export interface CodexRun {
  code: number
  /** The final agent message (Codex prints only that on stdout). */
  stdout: string
  stderr: string
}

export interface CodexOptions {
  baseUrl: string
  key: string
  model: string
  prompt: string
  /** Run commands without Codex's sandbox (needed to run `exec_command` in a container). */
  fullAccess?: boolean
  timeoutMs?: number
  /** More `-c key=value` settings (TOML values), after the provider's. */
  config?: string[]
  /** Codex's home and working folder, kept by the caller (a second run resumes the first's session). */
  dirs?: { home: string; work: string }
  /** `codex exec resume --last`: the session of the last run in `dirs`. */
  resume?: boolean
}

/** A port nothing listens on: where any attempt to reach beyond loopback ends. */
const DEAD_PROXY = 'http://127.0.0.1:9'

export async function runCodex(bin: string, opts: CodexOptions): Promise<CodexRun> {
  const home = opts.dirs?.home ?? mkdtempSync(join(tmpdir(), 'switchyard-codex-'))
  const work = opts.dirs?.work ?? mkdtempSync(join(tmpdir(), 'switchyard-codex-work-'))
  const args = [
    bin,
    'exec',
    ...(opts.resume ? ['resume', '--last'] : []),
    '--skip-git-repo-check',
    '-c',
    'model_provider="switchyard"',
    '-c',
    `model=${JSON.stringify(opts.model)}`,
    '-c',
    'model_providers.switchyard.name="Switchyard"',
    '-c',
    `model_providers.switchyard.base_url=${JSON.stringify(opts.baseUrl)}`,
    '-c',
    'model_providers.switchyard.wire_api="responses"',
    '-c',
    'model_providers.switchyard.env_key="SWITCHYARD_API_KEY"',
    '-c',
    'check_for_update_on_startup=false',
    '-c',
    'analytics.enabled=false',
    ...(opts.config ?? []).flatMap((c) => ['-c', c]),
    ...(opts.fullAccess ? ['-s', 'danger-full-access'] : []),
    opts.prompt,
  ]
  const proxy = {
    HTTPS_PROXY: DEAD_PROXY,
    HTTP_PROXY: DEAD_PROXY,
    ALL_PROXY: DEAD_PROXY,
    https_proxy: DEAD_PROXY,
    http_proxy: DEAD_PROXY,
    all_proxy: DEAD_PROXY,
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
  }
  try {
    const proc = Bun.spawn(args, {
      cwd: work,
      env: {
        PATH: '/usr/local/bin:/usr/bin:/bin',
        HOME: home,
        CODEX_HOME: home,
        SWITCHYARD_API_KEY: opts.key,
        ...proxy,
      },
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
      timeout: opts.timeoutMs ?? 60_000,
    })
    const [stdout, stderr, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ])
    return { code, stdout, stderr }
  } finally {
    if (!opts.dirs) {
      rmSync(home, { recursive: true, force: true })
      rmSync(work, { recursive: true, force: true })
    }
  }
}
