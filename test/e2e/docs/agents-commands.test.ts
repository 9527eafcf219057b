/**
 * docs/agents.md's commands, run as pasted (read from the page):
 * - "Watch a budget refuse, offline": its `budget.yaml` and its shell block, in a temporary
 *   folder, with `switchyard` the binary's bundle of the checkout (support/main-bundle.ts) and the documented port
 *   swapped for a free one — the loop prints what the page says, and the refusal is a 402
 *   `budget_exceeded`;
 * - the Claude Code block: with its variables, `CLAUDE_CODE_MAX_CONTEXT_TOKENS` among them, no
 *   "assumes a context window of 1m tokens" notice (skipped, saying so, without the test-client
 *   package). The run without it is readme-commands.test.ts's `claude --model demo/agent`: the
 *   README's block is this one less that line, and that run shows the notice.
 * The two are independent (a folder, port and gateway each) and run at once: each is mostly
 * processes starting.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CLAUDE, reportClaudeAbsent } from '../../support/claude-code.ts'
import { REPO } from '../../support/cli.ts'
import { blockAfter, commandLines } from '../../support/docs.ts'
import { startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'
import { mainBundle } from '../../support/main-bundle.ts'

const PAGE = ['docs/agents.md']
const DOCUMENTED = '127.0.0.1:8080'
const dirs: string[] = []
const tempFolder = () => {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-agents-doc-'))
  dirs.push(dir)
  return dir
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

function freePort(): number {
  const s = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response() })
  const port = s.port!
  s.stop(true)
  return port
}

describe('Watch a budget refuse, offline', () => {
  test.concurrent("the page's budget.yaml and commands: 200 200 402 402, then the refusal names the budget", async () => {
    const dir = tempFolder()
    const at = `127.0.0.1:${freePort()}`
    const yaml = blockAfter('## Watch a budget refuse, offline', 'yaml', PAGE).text
    expect(yaml).toContain('port: 8080')
    writeFileSync(join(dir, 'budget.yaml'), yaml.replace('port: 8080', `port: ${at.split(':')[1]}`))
    const lines = commandLines(blockAfter('In the folder that holds it', 'sh', PAGE).text)
    expect(lines[0]).toBe('switchyard accounts create newcomer --config budget.yaml')
    expect(lines.at(-1)).toBe('kill $!')
    // `switchyard` is the binary: here what it is compiled from, the bundle of the checkout's
    // src/main.ts, exec'd by a `switchyard` on PATH so that `$!` is the gateway's own process.
    const bin = join(dir, 'bin')
    mkdirSync(bin)
    writeFileSync(
      join(bin, 'switchyard'),
      `#!/bin/sh\nexec '${process.execPath}' '${await mainBundle()}' "$@"\n`,
      {
        mode: 0o755,
      },
    )
    const script = lines.map((l) => l.replaceAll(DOCUMENTED, at)).join('\n')
    const proc = Bun.spawn(['sh', '-c', script], {
      cwd: dir,
      env: { PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`, HOME: dir },
      stdout: 'pipe',
      stderr: 'pipe',
      timeout: 60_000,
    })
    const [stdout, , code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ])
    expect(code).toBe(0)
    expect(stdout).toContain('200 200 402 402 ')
    const refusal = JSON.parse(stdout.slice(stdout.indexOf('{"error"')).split('\n')[0]!)
    expect(refusal.error).toMatchObject({ code: 'budget_exceeded', type: 'billing_error' })
    expect(refusal.error.message).toContain('A lower max_tokens')
  }, 60_000)
})

describe.skipIf(!CLAUDE)('Claude Code as the page pastes it', () => {
  let gw: TestGateway
  let key: string
  const STARTER = Bun.YAML.parse(
    readFileSync(join(REPO, 'switchyard.example.yaml'), 'utf8').replaceAll(
      '${SWITCHYARD_ADMIN_TOKEN}',
      'x'.repeat(40),
    ),
  ) as { providers: unknown[]; plans: Record<string, unknown> }
  // Started by the test, not a beforeAll: a hook of this describe's would keep its test from
  // running beside the budget's (Bun runs concurrent tests together only across hook-free scopes).
  afterAll(() => gw?.stop())

  /** The block's exports as variables, and the model of its `claude --model` line. */
  function block(): { env: Record<string, string>; model: string } {
    const env: Record<string, string> = {}
    let model = ''
    for (const line of commandLines(blockAfter('### Claude Code', 'sh', PAGE).text)) {
      const m = /^export (\w+)=(\S+)$/.exec(line)
      if (m) env[m[1]!] = m[2]!
      else model = /^claude --model (\S+)$/.exec(line)![1]!
    }
    return { env, model }
  }

  async function claude(env: Record<string, string>, model: string) {
    const home = tempFolder()
    const proc = Bun.spawn([CLAUDE!, '-p', 'say hi', '--model', model], {
      cwd: home,
      stdout: 'pipe',
      stderr: 'pipe',
      timeout: 90_000,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: home,
        ...env,
        ANTHROPIC_BASE_URL: env.ANTHROPIC_BASE_URL!.replace(`http://${DOCUMENTED}`, gw.url),
        ANTHROPIC_AUTH_TOKEN: key,
        DISABLE_TELEMETRY: '1',
        DISABLE_AUTOUPDATER: '1',
        HTTPS_PROXY: 'http://127.0.0.1:9',
        HTTP_PROXY: 'http://127.0.0.1:9',
        NO_PROXY: '127.0.0.1,localhost',
      },
    })
    const [stdout, stderr] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
    ])
    return { stdout, stderr }
  }

  // Without the variable (the README's block, run by readme-commands.test.ts) the notice is there.
  test.concurrent("with CLAUDE_CODE_MAX_CONTEXT_TOKENS (the page's block) no 1m-window notice", async () => {
    gw = await startGateway({ doc: testConfigDoc({ providers: STARTER.providers, plans: STARTER.plans }) })
    key = (await gw.key('claude-user', 'dev')).key
    const { env, model } = block()
    expect(env.CLAUDE_CODE_MAX_CONTEXT_TOKENS).toBe('200000')
    const told = await claude(env, model)
    expect(told.stdout).toContain('Echo: say hi')
    expect(told.stderr).not.toContain("doesn't recognize the model")
  }, 120_000)
})
reportClaudeAbsent('the Claude Code block of docs/agents.md')
