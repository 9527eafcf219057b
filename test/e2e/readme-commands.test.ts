/**
 * Issue 22 finding 5: the README's commands work as pasted. They are read from README.md itself
 * (only the address and the key are swapped for the test gateway's) and run against the starter
 * config (`switchyard.example.yaml`):
 * - the quick start's account has room for what the quick start does, a coding agent included
 *   (the free plan's 5 requests a minute ran out inside it);
 * - the Codex one-liner and the `config.toml` block (the one-liner lacked the provider `name`:
 *   Codex 0.169 refused it, "provider name must not be empty");
 * - the Claude Code commands: the demo answers the user's words, not the `<system-reminder>`
 *   block Claude Code adds to the turn.
 * Codex and Claude Code come from the separate test-client package; without it those tests skip.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { quotePlaceholders } from '../../src/config/yaml.ts'
import { CLAUDE } from '../support/claude-code.ts'
import { codexBinary } from '../support/codex.ts'
import { ADMIN_TOKEN, startGateway, type TestGateway } from '../support/gateway.ts'

const README = await Bun.file(new URL('../../README.md', import.meta.url)).text()
const STARTER = Bun.YAML.parse(
  quotePlaceholders(await Bun.file(new URL('../../switchyard.example.yaml', import.meta.url)).text()),
) as { providers: unknown[]; plans: Record<string, unknown>; default_plan: string }
const DOCUMENTED = 'http://127.0.0.1:8080'
const codex = codexBinary()

/** Shell words, as sh splits them: whitespace separates, '…' and "…" quote (no escapes needed here). */
export function shellWords(line: string): string[] {
  const words: string[] = []
  let word: string | null = null
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!
    if (c === "'" || c === '"') {
      const end = line.indexOf(c, i + 1)
      word = (word ?? '') + line.slice(i + 1, end)
      i = end
    } else if (/\s/.test(c)) {
      if (word !== null) words.push(word)
      word = null
    } else word = (word ?? '') + c
  }
  if (word !== null) words.push(word)
  return words
}

/** Every non-loopback connection goes to a closed local port. */
const ISOLATED = {
  PATH: '/usr/local/bin:/usr/bin:/bin',
  HTTPS_PROXY: 'http://127.0.0.1:9',
  HTTP_PROXY: 'http://127.0.0.1:9',
  ALL_PROXY: 'http://127.0.0.1:9',
  https_proxy: 'http://127.0.0.1:9',
  http_proxy: 'http://127.0.0.1:9',
  all_proxy: 'http://127.0.0.1:9',
  NO_PROXY: '127.0.0.1,localhost',
  no_proxy: '127.0.0.1,localhost',
  DISABLE_AUTOUPDATER: '1',
  DISABLE_TELEMETRY: '1',
  DISABLE_ERROR_REPORTING: '1',
}

async function run(cmd: string[], env: Record<string, string>, cwd: string) {
  const proc = Bun.spawn(cmd, { cwd, env, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe', timeout: 90_000 })
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ])
  if (code !== 0) console.log(`${cmd[0]} exited ${code}\n${stdout}\n${stderr}`)
  return { code, stdout, stderr }
}

let gw: TestGateway
let key: string
const homes: string[] = []
const home = () => {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-readme-'))
  homes.push(dir)
  return dir
}
const here = (text: string) => text.replaceAll(DOCUMENTED, gw.url)

beforeAll(async () => {
  gw = await startGateway({
    doc: {
      server: { host: '127.0.0.1', port: 0 },
      admin: { token: ADMIN_TOKEN },
      providers: STARTER.providers,
      plans: STARTER.plans,
      default_plan: STARTER.default_plan,
    },
  })
  const plan = /accounts create alice --plan (\S+)/.exec(README)![1]!
  key = (await gw.key('alice', plan)).key
})
afterAll(async () => {
  await gw.stop()
  for (const dir of homes) rmSync(dir, { recursive: true, force: true })
})

describe('the quick start', () => {
  test('its account has room for a coding agent: 30 requests in a minute, none refused', async () => {
    const statuses: number[] = []
    for (let i = 0; i < 30; i++) {
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'hello' }] }),
      })
      statuses.push(res.status)
      await res.text()
    }
    expect(statuses.filter((s) => s !== 200)).toEqual([])
  })
})

describe.skipIf(!codex)('Codex as the README says', () => {
  test('the one-liner, as written', async () => {
    const line = /`(codex exec [\s\S]*?)`/.exec(README)![1]!
    const words = shellWords(here(line)).map((w) => (w === 'your task' ? 'say hi' : w))
    expect(words).toContain('model_providers.switchyard.name="Switchyard"')
    words[0] = codex!
    const dir = home()
    const r = await run(
      [...words.slice(0, 2), '--skip-git-repo-check', ...words.slice(2)],
      { ...ISOLATED, HOME: dir, CODEX_HOME: dir, SWITCHYARD_API_KEY: key },
      dir,
    )
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('Echo:')
  }, 100_000)

  test('the config.toml block, as written', async () => {
    const toml = /```toml\n([\s\S]*?)```/.exec(README)![1]!
    const dir = home()
    writeFileSync(join(dir, 'config.toml'), here(toml))
    const r = await run(
      [codex!, 'exec', '--skip-git-repo-check', 'say hi'],
      { ...ISOLATED, HOME: dir, CODEX_HOME: dir, SWITCHYARD_API_KEY: key },
      dir,
    )
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('Echo:')
  }, 100_000)
})

describe.skipIf(!CLAUDE)('Claude Code as the README says', () => {
  /** The three `export`s of the README's Claude Code block. */
  function claudeEnv(dir: string): Record<string, string> {
    const block = /## Claude Code and the Anthropic SDK[\s\S]*?```sh\n([\s\S]*?)```/.exec(README)![1]!
    const env: Record<string, string> = { ...ISOLATED, HOME: dir }
    for (const m of here(block).matchAll(/^export (\w+)=(\S+)/gm)) env[m[1]!] = m[2]!
    expect(Object.keys(env)).toEqual(
      expect.arrayContaining([
        'ANTHROPIC_BASE_URL',
        'ANTHROPIC_AUTH_TOKEN',
        'CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC',
      ]),
    )
    env.ANTHROPIC_AUTH_TOKEN = key
    return env
  }

  test('`claude --model demo/agent`: the demo echoes the prompt, not Claude Code’s system reminders', async () => {
    const documented = /^claude --model (\S+)/m.exec(README)![1]!
    const dir = home()
    const r = await run([CLAUDE!, '-p', 'say hi', '--model', documented], claudeEnv(dir), dir)
    expect(r.code).toBe(0)
    expect(r.stdout).not.toContain('system-reminder')
    expect(r.stdout.trim()).toBe('Echo: say hi')
  }, 100_000)

  test('the tool example, as written', async () => {
    const line = /`(claude -p [^`]*)`/.exec(README)![1]!
    const words = shellWords(line)
    words[0] = CLAUDE!
    const dir = home()
    const r = await run(words, claudeEnv(dir), dir)
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('Tool result received')
  }, 100_000)
})
