/**
 * @module
 * The processes under test: the mock upstreams (in the bench's own process, where their request
 * counters can be read), the real gateway as a separate process (the source by default, or the
 * compiled `dist/switchyard`), an account on a plan whose limits never trigger, and a helper that
 * runs a load-generator child and reads its one JSON result line.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type AnthropicMock, startAnthropicMock } from '../mock-upstream/anthropic.ts'
import { type GeminiMock, startGeminiMock } from '../mock-upstream/gemini.ts'
import { type MockUpstream, startMockUpstream } from '../mock-upstream.ts'
import { startServer } from './server-child.ts'

export const REPO = join(import.meta.dir, '..', '..')
export const BINARY = join(REPO, 'dist', 'switchyard')
/** Model names on the mock that the gateway's config lists (the fault ones script failures). */
export const MOCK_MODELS = [
  'bench',
  'slow-stream',
  'slow-stream-200ms',
  // The c=1 lane's inter-event row (c1-lane.ts): an event every 2 ms.
  'slow-stream-2ms',
  'slow-headers-2000ms',
  'fault-500',
  'fault-cut-stream',
]
/** Client-side fetch cap: Bun queues more than 256 in-flight requests per process without it. */
export const CLIENT_ENV = { BUN_CONFIG_MAX_HTTP_REQUESTS: '4096' }

export interface Mocks {
  /** No added latency: throughput runs, slow streams, faults. */
  fast: MockUpstream
  /** 50 ms before the response headers: the open-loop added-latency runs. */
  slow: MockUpstream
  /** The recorded Anthropic text stream: the messages pass-through row. */
  anthropic: AnthropicMock
  /** The recorded Gemini text stream: the Gemini surface's pass-through row. */
  gemini: GeminiMock
  stop(): Promise<void>
}

export async function startMocks(chunks: number): Promise<Mocks> {
  const fast = await startMockUpstream({ chunks, latencyMs: 0 })
  const slow = await startMockUpstream({ chunks, latencyMs: 50 })
  const anthropic = await startAnthropicMock()
  const gemini = await startGeminiMock()
  return {
    fast,
    slow,
    anthropic,
    gemini,
    stop: async () => {
      await fast.stop()
      await slow.stop()
      await anthropic.stop()
      await gemini.stop()
    },
  }
}

/** `mock/embed` (pass-through to the mock's /v1/embeddings) and `demo/embed`: 1536-value vectors. */
const EMBEDDING_MODEL = {
  name: 'embed',
  upstream_name: 'text-embedding-3-small',
  type: 'embedding',
  context_window: 8192,
  dimensions: 1536,
}

/** The tokens-and-money row (tokens.ts): a plan with TPM, TPD and a budget too large to refuse, a priced route. */
export const METERED_PLAN = {
  rpm: null,
  rpd: null,
  tpm: 1_000_000_000,
  tpd: 1_000_000_000_000,
  budget: { usd: 1_000_000, period: 'month' },
  models: ['*'],
}
export const PRICED_MODEL = 'bench-priced'
/** The waterfall's full path (waterfall.ts): priced, with a fallback (never called: no fault). */
export const FULL_MODEL = 'bench-full'

/** The alias and pool rows' names (aliases.ts): one for `mock/bench`, a 1:1 pool of it and `mock/bench-pool`. */
export const BENCH_ALIASES = [
  { id: 'bench/alias', to: 'mock/bench' },
  {
    id: 'bench/pool',
    to: [
      { model: 'mock/bench', weight: 1 },
      { model: 'mock/bench-pool', weight: 1 },
    ],
  },
]

export function configDoc(mocks: Mocks, dbPath: string): Record<string, unknown> {
  const model = (name: string) => ({
    name,
    context_window: 128_000,
    max_output_tokens: 4096,
    features: ['streaming', 'tools', 'json_mode', 'system_messages'],
  })
  return {
    server: { host: '127.0.0.1', port: 0 },
    database: { path: dbPath },
    providers: [
      {
        prefix: 'mock',
        kind: 'openai',
        base_url: mocks.fast.url,
        api_key: 'x',
        models: [
          ...MOCK_MODELS.map(model),
          EMBEDDING_MODEL,
          // The same route with a fallback configured: the attempt loop's happy-path cost (fallback.ts).
          { ...model('bench-fb'), upstream_name: 'bench', fallbacks: ['mock50/bench'] },
          // The same route under a second name: the second member of the pool row (aliases.ts).
          { ...model('bench-pool'), upstream_name: 'bench' },
          // The same route priced, for the tokens-and-money row (tokens.ts).
          { ...model(PRICED_MODEL), upstream_name: 'bench', pricing: { input: 0.15, output: 0.6 } },
          {
            ...model(FULL_MODEL),
            upstream_name: 'bench',
            pricing: { input: 0.15, output: 0.6 },
            fallbacks: ['mock50/bench'],
          },
          // The same governed path paced at an event every 2 ms: the c=1 lane's inter-event row.
          {
            ...model(`${FULL_MODEL}-paced`),
            upstream_name: 'slow-stream-2ms',
            pricing: { input: 0.15, output: 0.6 },
            fallbacks: ['mock50/bench'],
          },
        ],
      },
      // Embeddings made in the gateway itself: the operation's cost without an upstream.
      { prefix: 'demo', kind: 'demo', models: [EMBEDDING_MODEL] },
      { prefix: 'mock50', kind: 'openai', base_url: mocks.slow.url, api_key: 'x', models: [model('bench')] },
      // The fast mock behind a pool of two keys: session affinity's cost (affinity.ts).
      {
        prefix: 'mockpool',
        kind: 'openai',
        base_url: mocks.fast.url,
        keys: [{ api_key: 'x-pool-a' }, { api_key: 'x-pool-b' }],
        models: [model('bench')],
      },
      {
        prefix: 'anth',
        kind: 'anthropic',
        base_url: mocks.anthropic.url,
        api_key: 'x',
        models: [model('bench')],
      },
      // The Gemini surface passes through to it (gemini.ts).
      { prefix: 'gem', kind: 'gemini', base_url: mocks.gemini.url, api_key: 'x', models: [model('bench')] },
      // The same mock's Responses API: `POST /v1/responses` passes through untranslated.
      {
        prefix: 'mockr',
        kind: 'openai',
        wire: 'responses',
        base_url: mocks.fast.url,
        api_key: 'x',
        models: [model('bench')],
      },
    ],
    aliases: BENCH_ALIASES,
    plans: { unlimited: { rpm: null, rpd: null, models: ['*'] }, metered: METERED_PLAN },
    default_plan: 'unlimited',
  }
}

export interface Gateway {
  url: string
  /** The serving process (from serve's JSON line): CPU and RSS are measured on it. */
  pid: number
  /** The process we started when it is not the server (serve re-runs itself to set its env). */
  supervisorPid: number | null
  key: string
  /**
   * A key of each account the bench sends traffic through this gateway as (`key`'s first; the
   * tokens row adds its metered account's): what the gateway admitted is their `/v1/usage` summed.
   */
  keys: string[]
  mode: 'source' | 'binary'
  command: string[]
  /** The folder of its config, database and log. */
  dir: string
  dbPath: string
  logPath: string
  /** Exit code once the process has ended, else null. */
  exitCode(): number | null
  stop(): Promise<void>
}

/** argv that runs the gateway's CLI: the compiled binary, or the source with this Bun. */
export function gatewayCli(binary: boolean): string[] {
  return binary ? [BINARY] : [process.execPath, join(REPO, 'src', 'main.ts')]
}

export interface Workspace {
  dir: string
  remove(): void
}

export function workspace(): Workspace {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-bench-'))
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) }
}

/**
 * Writes the config, creates the account and its key with the CLI, then starts `serve` (through
 * `startServer`: healthy, or killed and thrown). Everything of the gateway's goes in `where.dir`,
 * made here if it is not there: a workspace, or a folder of one for each of a run's gateways.
 */
export async function startGateway(
  where: { dir: string },
  mocks: Mocks,
  opts: {
    binary: boolean
    env?: Record<string, string>
    bunFlags?: string[]
    /** Edits the config (another database engine, other plans); the account is on `plan`. */
    doc?: (doc: Record<string, unknown>) => Record<string, unknown>
    plan?: string
    /** Another replica of a gateway already set up: reuse its config, account and key. */
    replicaOf?: Gateway
    /** Another checkout's source to serve (the c=1 lane's `--baseline`): its src/main.ts. */
    root?: string
  },
): Promise<Gateway> {
  const main = join(opts.root ?? REPO, 'src', 'main.ts')
  const exe = opts.root ? [process.execPath, main] : gatewayCli(opts.binary)
  const serveExe = opts.binary ? exe : [process.execPath, ...(opts.bunFlags ?? []), main]
  if (opts.binary && !(await Bun.file(BINARY).exists())) {
    throw new Error(`${BINARY} not found: run \`bun run build\` first, or drop --binary`)
  }
  mkdirSync(where.dir, { recursive: true })
  const dbPath = join(where.dir, 'switchyard.db')
  const configPath = join(where.dir, 'switchyard.yaml')
  const doc = (opts.doc ?? ((d) => d))(configDoc(mocks, dbPath))
  const onSqlite = !(doc.database as { url?: string }).url
  const common = ['--config', configPath, ...(onSqlite ? ['--db', dbPath] : []), '--json']
  let key = opts.replicaOf ? { key: opts.replicaOf.key } : null
  if (!key) {
    // JSON is YAML: the config is written as JSON to avoid quoting questions.
    writeFileSync(configPath, JSON.stringify(doc, null, 2))
    await cliJson([...exe, 'migrate', ...common])
    await cliJson([...exe, 'accounts', 'create', 'bench', '--plan', opts.plan ?? 'unlimited', ...common])
    key = (await cliJson([...exe, 'keys', 'create', 'bench', ...common])) as { key: string }
  }

  const logPath = join(
    where.dir,
    opts.replicaOf ? `gateway-${crypto.randomUUID().slice(0, 8)}.log` : 'gateway.log',
  )
  const command = [...serveExe, 'serve', '--port', '0', ...common]
  const served = await startServer<{ url: string; pid: number }>(command, {
    cwd: REPO,
    stderr: logPath,
    env: opts.env,
    health: (info) => `${info.url}/healthz`,
  })
  return {
    url: served.info.url,
    pid: served.info.pid,
    supervisorPid: served.proc.pid === served.info.pid ? null : served.proc.pid,
    key: key.key,
    keys: [key.key],
    mode: opts.binary ? 'binary' : 'source',
    command: command.map((c) => c.replace(REPO, '.')),
    dir: where.dir,
    dbPath,
    logPath,
    exitCode: () => served.proc.exitCode,
    stop: served.stop,
  }
}

export async function cliJson(cmd: string[]): Promise<unknown> {
  const p = Bun.spawn(cmd, { cwd: REPO, stdout: 'pipe', stderr: 'pipe', stdin: 'ignore' })
  const [out, err, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ])
  if (code !== 0) throw new Error(`${cmd.slice(-8).join(' ')} failed (${code}): ${err.trim()}`)
  return JSON.parse(out)
}

/**
 * Runs `bun <script> <json args>` and returns the object after its `BENCH_JSON ` line. The child is
 * killed if it overruns `timeoutMs`. `onLine` sees every other stdout line as it arrives.
 */
export async function runChild<T>(
  script: string,
  args: unknown,
  timeoutMs: number,
  onLine?: (line: string) => void,
): Promise<T> {
  const proc = Bun.spawn([process.execPath, script, JSON.stringify(args)], {
    cwd: REPO,
    stdout: 'pipe',
    stderr: 'pipe',
    stdin: 'ignore',
    env: { ...process.env, ...CLIENT_ENV },
  })
  const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs)
  let result: T | undefined
  const errText = new Response(proc.stderr).text()
  const dec = new TextDecoder()
  let buf = ''
  for await (const chunk of proc.stdout as unknown as AsyncIterable<Uint8Array>) {
    buf += dec.decode(chunk, { stream: true })
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      const line = buf.slice(0, nl)
      buf = buf.slice(nl + 1)
      if (line.startsWith('BENCH_JSON ')) result = JSON.parse(line.slice(11)) as T
      else onLine?.(line)
    }
  }
  const code = await proc.exited
  clearTimeout(timer)
  if (result === undefined) {
    throw new Error(`${script} gave no result (exit ${code}): ${(await errText).trim().slice(-500)}`)
  }
  return result
}

/**
 * GET /v1/usage → requests in the last 24 h (the requests table, as the product reports it), every
 * account's summed. The route is throttled per key (60 a minute, bursts of 20): a 429 is waited out
 * as its `retry-after-ms` says — short rounds (the smoke's one-second ones) read it faster than that.
 */
export async function usageRequests(gw: Gateway): Promise<number> {
  let n = 0
  for (const key of gw.keys) {
    let res = await fetch(`${gw.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })
    for (let tries = 0; res.status === 429 && tries < 5; tries++) {
      await res.arrayBuffer()
      await Bun.sleep(Number(res.headers.get('retry-after-ms') ?? 1_000))
      res = await fetch(`${gw.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })
    }
    if (!res.ok) throw new Error(`/v1/usage answered ${res.status}`)
    const u = (await res.json()) as { usage: { last_24h: { requests: number } } }
    n += u.usage.last_24h.requests
  }
  return n
}
