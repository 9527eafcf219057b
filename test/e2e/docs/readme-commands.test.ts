/**
 * Issue 22 finding 5: the documents' commands work as pasted. They are read from README.md itself
 * and from the docs/ pages the reference moved to in issue 47 (only the address and the key are
 * swapped for the test gateway's) and run against the starter
 * config (`switchyard.example.yaml`):
 * - the quick start's account has room for what the quick start does, a coding agent included
 *   (the free plan's 5 requests a minute ran out inside it);
 * - the Codex one-liner and the `config.toml` block (the one-liner lacked the provider `name`:
 *   Codex 0.169 refused it, "provider name must not be empty");
 * - the Claude Code commands: the demo answers the user's words, not the `<system-reminder>`
 *   block Claude Code adds to the turn; without docs/agents.md's `CLAUDE_CODE_MAX_CONTEXT_TOKENS`
 *   Claude Code says it assumes a 1m-token window (agents-commands.test.ts runs that page's block);
 * - the Codex one-liner under strace: every connection Codex opens (DNS included) is to loopback;
 * - the quick start's own commands (`npx bun src/main.ts accounts create …`, `keys create`, the
 *   curl), the per-key limits block on the starter config of `init`, and the admin API's `PATCH
 *   …/limits` curl with the token read from `$SWITCHYARD_ADMIN_TOKEN`, each run by `sh` as pasted.
 * - issue 47: `npm start` (the install already done); the install page's binary block from `init`
 *   on, `switchyard` being this Bun on the binary's bundle of the checkout; the traces page's Langfuse exports and
 *   its serve with a local collector. test/docs/commands.test.ts names which test runs each
 *   command the documents show.
 * Codex and Claude Code come from the separate test-client package; without it those tests skip.
 * The runs start together (support/started.ts): the ones that need no test gateway (the
 * per-key block, `npm start`, the binary block) with the gateway, the agents once the quick start
 * has made their key; each test awaits its run and checks it as before.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseConfig } from '../../../src/config/index.ts'
import { quotePlaceholders } from '../../../src/config/yaml.ts'
import { readConnects, tracingConnects } from '../../support/agent-block.ts'
import { CLAUDE } from '../../support/claude-code.ts'
import { REPO } from '../../support/cli.ts'
import { codexBinary } from '../../support/codex.ts'
import { testConfigDoc } from '../../support/config-doc.ts'
import { blockAfter, commandLines, serveAsPasted, switchyardBinary } from '../../support/docs.ts'
import { ADMIN_TOKEN, startGateway, type TestGateway } from '../../support/gateway.ts'
import { ISOLATED, outputLines, type RunResult, run, shellWords } from '../../support/pasted.ts'
import { started } from '../../support/started.ts'

const README = await Bun.file(new URL('../../../README.md', import.meta.url)).text()
const STARTER = Bun.YAML.parse(
  quotePlaceholders(await Bun.file(new URL('../../../switchyard.example.yaml', import.meta.url)).text()),
) as { providers: unknown[]; plans: Record<string, unknown>; default_plan: string }
const DOCUMENTED = 'http://127.0.0.1:8080'
const codex = codexBinary()
/** `switchyard …` as the binary runs it (support/docs.ts): ten spawns here. */
const asBinary = await switchyardBinary()

/**
 * The commands of the first ```sh block after `heading` in the documents (the README, then the
 * docs/ pages): continuation lines joined, comments cut, one command a line.
 */
function shBlock(heading: string): string[] {
  return commandLines(blockAfter(heading, 'sh').text)
}

/** One command line through `sh`, as a terminal would run it (npx's and Bun's caches in a temp HOME). */
function sh(line: string, cwd: string, env: Record<string, string> = {}) {
  return run(['sh', '-c', line], { PATH: process.env.PATH ?? ISOLATED.PATH, HOME: home(), ...env }, cwd)
}

/** A line that starts with `bun`, run by this Bun (which need not be on the PATH). */
const bunAsPasted = (line: string) => line.replace(/^bun /, `'${process.execPath}' `)

/** `npx bun` as pasted where npx is installed (the quick start's machine), else this Bun. */
const npxBun = (line: string) =>
  Bun.which('npx') ? line : line.replace(/^npx bun /, `'${process.execPath}' `)

let gw: TestGateway
let key: string
let quickCurl: string
/** What the tests below await (set in beforeAll; the gateway-free ones before the gateway starts). */
let perKeyBlock: Promise<unknown>
let npmStarted: Promise<void>
let binaryBlock: Promise<void>
let codexOneLiner: Promise<RunResult & { connects: string[] | null }>
let codexToml: Promise<RunResult>
let claudeModel: Promise<RunResult>
let claudeTool: Promise<RunResult>
const homes: string[] = []
const home = () => {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-readme-'))
  homes.push(dir)
  return dir
}
const here = (text: string) => text.replaceAll(DOCUMENTED, gw.url)

beforeAll(async () => {
  // Neither needs the test gateway: each serves or configures a switchyard of its own.
  perKeyBlock = started(runPerKeyBlock)
  npmStarted = started(async () => {
    if (!Bun.which('npm')) return
    expect(shBlock('## Quick start')).toEqual(['npm install && npm start'])
    await npmStart('npm install && npm start')
  })
  binaryBlock = started(runBinaryBlock)
  gw = await startGateway({
    doc: {
      server: { host: '127.0.0.1', port: 0 },
      admin: { token: ADMIN_TOKEN },
      providers: STARTER.providers,
      plans: STARTER.plans,
      default_plan: STARTER.default_plan,
    },
  })
  // The quick start's own commands make the account and the key every test below uses, on the
  // test gateway's database (SWITCHYARD_DB, which the README names as the override).
  const [account, create, ...rest] = shBlock('make an account and a key')
  expect(account).toBe(
    'npx bun src/main.ts accounts create alice --plan dev --config switchyard.example.yaml',
  )
  expect(create).toStartWith('npx bun src/main.ts keys create alice ')
  const env = { SWITCHYARD_DB: join(gw.dir, 'switchyard.db') }
  expect((await sh(npxBun(account!), REPO, env)).code).toBe(0)
  const made = await sh(npxBun(create!), REPO, env)
  expect(made.code).toBe(0)
  key = /^sk-sy-\S+$/m.exec(made.stdout)![0]
  quickCurl = rest.join('\n')
  // The agents, on the key just made.
  if (codex) {
    codexOneLiner = started(runCodexOneLiner)
    codexToml = started(runCodexToml)
  }
  if (CLAUDE) {
    claudeModel = started(runClaudeModel)
    claudeTool = started(runClaudeTool)
  }
  // Not a measure: room for the gateway's start and two `npx bun` runs beside this file's other
  // runs (and other files) on a loaded 2-core host; only a stuck start fails here. The tests below
  // likewise, each above the 150 s a spawn gets (support/pasted.ts), so a stuck spawn fails first,
  // its output printed.
}, 120_000)
afterAll(async () => {
  // Every started run ends (its processes stopped) before its folders go — within a bound: a run
  // stuck past its test's timeout (the collector waiting for a span that never comes) must not
  // keep the gateway and the folders behind when this hook times out.
  let bound: ReturnType<typeof setTimeout> | undefined
  try {
    await Promise.race([
      Promise.allSettled([
        perKeyBlock,
        npmStarted,
        binaryBlock,
        codexOneLiner,
        codexToml,
        claudeModel,
        claudeTool,
      ]),
      new Promise((resolve) => {
        bound = setTimeout(resolve, 30_000)
      }),
    ])
  } finally {
    clearTimeout(bound)
    await gw?.stop()
    for (const dir of homes) rmSync(dir, { recursive: true, force: true })
  }
}, 60_000)

/** The README's per-key limits block, each line through `sh`, on the starter config of `switchyard init`. */
async function runPerKeyBlock() {
  const dir = home()
  expect((await sh(asBinary('switchyard init'), dir)).code).toBe(0)
  let keyId = ''
  const lines = shBlock('## Per-key limits')
  expect(lines.length).toBe(5)
  for (const line of lines) {
    expect(line).toStartWith('switchyard ')
    const r = await sh(asBinary(line).replaceAll('KEY_ID', keyId), dir)
    expect(r.code).toBe(0)
    keyId ||= /\bkey_\w+/.exec(r.stdout)?.[0] ?? ''
  }
  const shown = await sh(asBinary('switchyard keys list acme --json'), dir)
  expect(JSON.parse(shown.stdout)[0].limits).toEqual({
    rpm: 5,
    rpd: null,
    tpm: null,
    tpd: null,
    budget: { usd: 5, period: 'day' },
    models: null,
  })
}

/** `npm start` as the install page pastes it; `npm install` is left out: the checkout is installed, and it needs the network. */
async function npmStart(documented: string) {
  expect(documented).toBe('npm install && npm start')
  const db = join(home(), 'switchyard.db')
  const serve = await serveAsPasted(documented.replace('npm install && ', ''), REPO, {
    HOME: home(),
    SWITCHYARD_DB: db,
  })
  try {
    const health = await fetch(`${serve.url}/healthz`)
    expect(health.status).toBe(200)
    await health.text()
  } finally {
    await serve.stop()
  }
}

/** The install page's binary block from `init` on, then the traces page's serve with a local collector. */
async function runBinaryBlock() {
  const [install, ...lines] = shBlock('## From the binary')
  expect(install).toStartWith('npm install && npm run build && sudo install')
  expect(lines).toEqual([
    'switchyard init',
    'switchyard accounts create alice --plan dev && switchyard keys create alice',
    'switchyard serve',
  ])
  const dir = home()
  expect((await sh(asBinary(lines[0]!), dir)).code).toBe(0)
  const made = await sh(asBinary(lines[1]!), dir)
  expect(made.code).toBe(0)
  const secret = /^sk-sy-\S+$/m.exec(made.stdout)![0]
  const chat = async (url: string) => {
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'hi' }] }),
    })
    expect(res.status).toBe(200)
    await res.text()
  }
  const serve = await serveAsPasted(asBinary(lines[2]!), dir, { HOME: home() })
  try {
    await chat(serve.url)
  } finally {
    await serve.stop()
  }

  // The collector as pasted (on a free port rather than 4318, which another run may hold).
  const [listen, traced] = shBlock('**A local collector**')
  expect(listen).toBe('bun test/support/otlp-collector.ts 4318')
  expect(traced).toBe('OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 switchyard serve')
  const collector = Bun.spawn(['sh', '-c', `exec ${bunAsPasted(listen!).replace(/ 4318$/, ' 0')}`], {
    cwd: REPO,
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'inherit',
  })
  try {
    const printed = outputLines(collector.stdout)
    const port = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec((await printed.next()).value ?? '')?.[1]
    expect(port).toBeDefined()
    const again = await serveAsPasted(asBinary(traced!.replace(':4318', `:${port}`)), dir, { HOME: home() })
    try {
      await chat(again.url)
      // Spans leave in batches every second; the collector prints each as it arrives.
      let span = ''
      for await (const line of printed) {
        span = line
        if (span.startsWith('chat demo/echo')) break
      }
      expect(span).toMatch(/^chat demo\/echo {2}trace [0-9a-f]{32} {2}span [0-9a-f]{16} /)
    } finally {
      await again.stop()
    }
  } finally {
    collector.kill()
    await collector.exited
  }
}

/**
 * The README's Codex one-liner, as written (the task `say hi`); under strace when installed,
 * `connects` every IP address the process tree connected to.
 */
async function runCodexOneLiner(): Promise<RunResult & { connects: string[] | null }> {
  const line = /`(codex exec [\s\S]*?)`/.exec(README)![1]!
  const words = shellWords(here(line)).map((w) => (w === 'your task' ? 'say hi' : w))
  expect(words).toContain('model_providers.switchyard.name="Switchyard"')
  words[0] = codex!
  const dir = home()
  const cmd = [...words.slice(0, 2), '--skip-git-repo-check', ...words.slice(2)]
  const trace = Bun.which('strace') ? join(dir, 'connect.trace') : null
  const r = await run(
    trace ? tracingConnects(cmd, trace) : cmd,
    { ...ISOLATED, HOME: dir, CODEX_HOME: dir, SWITCHYARD_API_KEY: key },
    dir,
  )
  return { ...r, connects: trace ? readConnects(trace) : null }
}

/** The README's Codex `config.toml` block, as written. */
async function runCodexToml(): Promise<RunResult> {
  const toml = /```toml\n([\s\S]*?)```/.exec(README)![1]!
  const dir = home()
  writeFileSync(join(dir, 'config.toml'), here(toml))
  return run(
    [codex!, 'exec', '--skip-git-repo-check', 'say hi'],
    { ...ISOLATED, HOME: dir, CODEX_HOME: dir, SWITCHYARD_API_KEY: key },
    dir,
  )
}

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

/** `claude --model demo/agent`, the model as the README writes it. */
async function runClaudeModel(): Promise<RunResult> {
  const documented = /^claude --model (\S+)/m.exec(README)![1]!
  const dir = home()
  return run([CLAUDE!, '-p', 'say hi', '--model', documented], claudeEnv(dir), dir)
}

/** A file of the tool example's folder: what its `ls` lists, so its answer shows the output came back. */
const LISTED = `switchyard-readme-${process.pid}.txt`

/** The README's tool example, as written. */
async function runClaudeTool(): Promise<RunResult> {
  const line = /`(claude -p [^`]*)`/.exec(README)![1]!
  const words = shellWords(line)
  words[0] = CLAUDE!
  const dir = home()
  writeFileSync(join(dir, LISTED), '')
  return run(words, claudeEnv(dir), dir)
}

describe('the quick start', () => {
  test('its curl, as pasted with the key it made: the demo answers', async () => {
    expect(quickCurl).toStartWith(`curl ${DOCUMENTED}/v1/chat/completions`)
    const r = await sh(here(quickCurl).replace('sk-sy-…', key), REPO)
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout).choices[0].message.content).toBe('Echo: hello')
  })

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

describe('per-key limits as the README says', () => {
  test('the command-line block, on the starter config of `switchyard init`', async () => {
    await perKeyBlock
  }, 120_000)

  test("the admin API's PATCH curl, the token read from $SWITCHYARD_ADMIN_TOKEN", async () => {
    const { id } = await gw.key('alice')
    const block = shBlock('changes them with JSON merge semantics')
    expect(block).toHaveLength(1)
    const r = await sh(here(block[0]!).replaceAll('KEY_ID', id), REPO, {
      SWITCHYARD_ADMIN_TOKEN: ADMIN_TOKEN,
    })
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout).limits).toEqual({
      rpm: null,
      rpd: null,
      tpm: 20000,
      tpd: null,
      budget: { usd: 5, period: 'day' },
      models: ['demo/echo'],
    })
  })
})

describe('the quick start as the install page says', () => {
  test.skipIf(!Bun.which('npm'))(
    '`npm start` serves the starter config',
    async () => {
      await npmStarted
    },
    120_000,
  )

  // And, in the same folder with the same key, the traces page's serve with a local collector.
  test('the binary block from `init` on: a key made, served, answered; then traced to a collector', async () => {
    await binaryBlock
  }, 150_000)
})

describe('traces as the traces page says', () => {
  test("Langfuse's exports, as pasted: Basic auth of the public and secret key", async () => {
    const [endpoint, headers, serve] = shBlock('**Langfuse**')
    expect(serve).toBe('switchyard serve')
    const r = await sh(
      `${endpoint}\n${headers}\nprintf '%s\\n%s' "$OTEL_EXPORTER_OTLP_ENDPOINT" "$OTEL_EXPORTER_OTLP_HEADERS"`,
      REPO,
      {
        LANGFUSE_PUBLIC_KEY: 'pk-lf-1234',
        LANGFUSE_SECRET_KEY: 'sk-lf-5678',
      },
    )
    expect(r.code).toBe(0)
    const [url, header] = r.stdout.split('\n') as [string, string]
    const telemetry = parseConfig(testConfigDoc(), 'test', {
      OTEL_EXPORTER_OTLP_ENDPOINT: url,
      OTEL_EXPORTER_OTLP_HEADERS: header,
    }).telemetry!
    expect(telemetry.tracesUrl).toBe('https://cloud.langfuse.com/api/public/otel/v1/traces')
    expect(telemetry.headers).toEqual({ Authorization: `Basic ${btoa('pk-lf-1234:sk-lf-5678')}` })
  })
})

describe.skipIf(!codex)('Codex as the README says', () => {
  // codex.test.ts's runs go through other providers; the demo's plain turn is this one.
  test('the one-liner, as written: the demo answers, and Codex sent the turn only to the gateway', async () => {
    const r = await codexOneLiner
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('Echo: say hi')
    if (r.connects) {
      // The gateway, or ISOLATED's dead proxy: Codex's own calls (github.com, api.github.com,
      // chatgpt.com on every run, traced 2026-11-30; the README says so) go there and fail.
      // Anything else, and the turn itself anywhere but the gateway, fails this.
      const gateway = `127.0.0.1:${new URL(gw.url).port}`
      expect(r.connects).toContain(gateway)
      expect(
        r.connects.filter((a) => a !== gateway && a !== `127.0.0.1:${new URL(ISOLATED.HTTPS_PROXY).port}`),
      ).toEqual([])
    } else console.log('strace is not installed: the loopback-only check of the Codex one-liner was skipped')
  }, 180_000)

  test('the config.toml block, as written', async () => {
    const r = await codexToml
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('Echo:')
  }, 180_000)
})

describe.skipIf(!CLAUDE)('Claude Code as the README says', () => {
  test('`claude --model demo/agent`: the demo echoes the prompt, not Claude Code’s system reminders', async () => {
    const r = await claudeModel
    expect(r.code).toBe(0)
    expect(r.stdout).not.toContain('system-reminder')
    expect(r.stdout.trim()).toBe('Echo: say hi')
    // This block lacks docs/agents.md's CLAUDE_CODE_MAX_CONTEXT_TOKENS: the notice it stops is here
    // (agents-commands.test.ts runs the page's block, with it, and sees none).
    expect(r.stderr).toContain('assumes a context window of 1m tokens')
  }, 180_000)

  test('the tool example, as written: the tool_result comes back; each request counted once', async () => {
    const r = await claudeTool
    expect(r.code).toBe(0)
    // The demo says this only when the last turn is the tool's result: the `ls` output came back.
    expect(r.stdout).toContain('Tool result received')
    expect(r.stdout).toContain(LISTED)
    // The only demo/agent requests of the quick start's key: the plain turn's one, the round trip's two.
    await claudeModel
    await gw.deps.recorder.flush()
    const res = await fetch(`${gw.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })
    expect(((await res.json()) as any).usage.by_model['demo/agent']?.requests).toBe(3)
  }, 180_000)
})
