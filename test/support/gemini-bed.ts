/**
 * @module
 * The Gemini surface's test bed: one gateway on port 0 with a provider of every kind behind it —
 * the demo, a gemini provider replaying the recorded streams (fake-gemini.ts, pass-through), an
 * openai provider (fake-openai-chat.ts) and an anthropic one (fake-anthropic.ts), both translated —
 * and a gemini embeddings upstream (fake-gemini-embeddings.ts). Plans: `unlimited`, `tiny`
 * (one request a minute) for the limits' refusal, `metered` (a token limit: answers counted and cut). The `@google/genai` SDK from test/clients, or null.
 *
 * @example
 * const bed = await startGeminiBed()
 * const ai = bed.genai && new bed.genai.GoogleGenAI({ apiKey: bed.key, httpOptions: { baseUrl: bed.gw.url } })
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { type FakeUpstream, startFakeAnthropic } from './fake-anthropic.ts'
import { startFakeGemini } from './fake-gemini.ts'
import { startFakeGeminiEmbeddings } from './fake-gemini-embeddings.ts'
import { type ChatAnswer, startFakeOpenAIChat } from './fake-openai-chat.ts'
import { ADMIN_TOKEN, DEMO_PROVIDER, PLANS, startGateway, type TestGateway, tempDir } from './gateway.ts'

export const UPSTREAM_KEY = 'sk-upstream-secret-456'
const CLIENTS = join(import.meta.dir, '..', 'clients')

/** `@google/genai` from the test clients package; null (and a printed line) when it is absent. */
export async function loadGenAI(tests: string): Promise<any | null> {
  try {
    return await import(Bun.resolveSync('@google/genai', CLIENTS))
  } catch {
    console.log(`@google/genai is not installed (npm install --prefix test/clients): skipping ${tests}.`)
    return null
  }
}

const GEMINI_CLI = join(CLIENTS, 'node_modules', '.bin', 'gemini')
/** Gemini CLI's path, or null when the test package is not installed. */
export const GEMINI: string | null = existsSync(GEMINI_CLI) ? GEMINI_CLI : null

const model = (name: string, features: string[], extra: Record<string, unknown> = {}) => ({
  name,
  context_window: 200_000,
  max_output_tokens: 8192,
  features,
  ...extra,
})
const ALL = [
  'streaming',
  'tools',
  'parallel_tool_calls',
  'vision',
  'system_messages',
  'json_mode',
  'json_schema',
]

const HEAD = { id: 'chatcmpl-fake', created: 1_700_000_000, model: 'gpt-fake' }
const USAGE = { prompt_tokens: 20, completion_tokens: 9, total_tokens: 29 }
const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
  ...HEAD,
  object: 'chat.completion.chunk',
  choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
})
/** What the openai upstream answers: a short text, streamed in two pieces. */
export const OPENAI_TEXT = 'Hello from openai.'
const OPENAI_ANSWER: ChatAnswer = {
  chunks: [
    chunk({ role: 'assistant', content: '' }),
    chunk({ content: 'Hello from ' }),
    chunk({ content: 'openai.' }),
    chunk({}, 'stop'),
    { ...HEAD, object: 'chat.completion.chunk', choices: [], usage: USAGE },
  ],
  json: {
    ...HEAD,
    object: 'chat.completion',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: OPENAI_TEXT, refusal: null },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: USAGE,
  },
}

export interface GeminiBed {
  gw: TestGateway
  gemini: FakeUpstream<string>
  anthropic: FakeUpstream<string>
  openai: FakeUpstream<string>
  embeddings: FakeUpstream<string>
  /** A key on the `unlimited` plan. */
  key: string
  stop(): Promise<void>
}

export async function startGeminiBed(): Promise<GeminiBed> {
  const gemini = await startFakeGemini({ apiKey: UPSTREAM_KEY })
  const anthropic = await startFakeAnthropic({ apiKey: UPSTREAM_KEY, afterToolResult: 'text' })
  const openai = await startFakeOpenAIChat({ 'gpt-fake': OPENAI_ANSWER })
  const embeddings = await startFakeGeminiEmbeddings({ apiKey: UPSTREAM_KEY })
  const gw = await startGateway({
    doc: {
      server: { host: '127.0.0.1', port: 0, stream_hold_ms: 300, stream_keepalive_ms: 250 },
      admin: { token: ADMIN_TOKEN },
      usage: { flush_ms: 20 },
      providers: [
        {
          prefix: 'gemini',
          kind: 'gemini',
          base_url: gemini.url,
          api_key: UPSTREAM_KEY,
          models: [
            ...['text', 'tool', 'thinking', 'stream-error'].map((n) => model(n, [...ALL, 'reasoning'])),
            // fake-gemini answers this name 503: the request falls back to an openai model.
            model('unavailable', ALL, { fallbacks: ['openai/gpt'] }),
          ],
        },
        {
          prefix: 'gemb',
          kind: 'gemini',
          base_url: embeddings.url,
          api_key: UPSTREAM_KEY,
          models: [
            {
              name: 'embed',
              upstream_name: 'gemini-embedding-001',
              type: 'embedding',
              context_window: 2048,
              dimensions: 3072,
            },
          ],
        },
        {
          prefix: 'anthropic',
          kind: 'anthropic',
          base_url: anthropic.url,
          api_key: UPSTREAM_KEY,
          models: ['text', 'thinking', 'tool'].map((n) => model(n, [...ALL, 'reasoning'])),
        },
        {
          prefix: 'openai',
          kind: 'openai',
          base_url: `${openai.url}/v1`,
          api_key: UPSTREAM_KEY,
          models: [model('gpt', ALL, { upstream_name: 'gpt-fake' })],
        },
        {
          ...DEMO_PROVIDER,
          models: [
            ...DEMO_PROVIDER.models,
            model('agent', [...ALL, 'reasoning'], { unsupported_tools: 'drop' }),
            { name: 'embed', type: 'embedding', context_window: 8192, dimensions: 64 },
          ],
        },
      ],
      plans: {
        ...PLANS,
        tiny: { rpm: 1, rpd: null, models: ['*'] },
        metered: { rpm: null, rpd: null, tpm: 1_000_000, models: ['*'] },
      },
      default_plan: 'free',
    },
  })
  const { key } = await gw.key('gemini-bed', 'unlimited')
  return {
    gw,
    gemini,
    anthropic,
    openai,
    embeddings,
    key,
    async stop() {
      await gw.stop()
      await Promise.all([gemini.stop(), anthropic.stop(), openai.stop(), embeddings.stop()])
    },
  }
}

export interface GeminiRun {
  code: number
  stdout: string
  stderr: string
}

/**
 * Gemini CLI in non-interactive mode (`-p`) against the gateway: a fresh HOME whose settings pick
 * the API-key auth (`security.auth.selectedType: gemini-api-key` — with GOOGLE_GEMINI_BASE_URL set
 * and no setting it picks the "gateway" auth type, which `-p` refuses), the workspace trusted by
 * env, and a proxy on a closed port for anything that is not 127.0.0.1.
 */
export async function runGemini(
  baseUrl: string,
  key: string,
  prompt: string,
  model: string,
  settings: string = GEMINI_SETTINGS,
): Promise<GeminiRun> {
  const home = tempDir('switchyard-gemini-')
  await Bun.write(join(home, '.gemini', 'settings.json'), settings)
  const proc = Bun.spawn([GEMINI!, '-p', prompt, '-m', model], {
    cwd: home,
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home,
      GOOGLE_GEMINI_BASE_URL: baseUrl,
      GEMINI_API_KEY: key,
      GEMINI_CLI_TRUST_WORKSPACE: 'true',
      // The CLI's launcher otherwise starts a second Node with a larger heap and runs the CLI there:
      // ~0.9 s of CPU a run (measured 2026-11-29, `--version`) for a limit a one-turn run never
      // reaches. The requests, the settings and the turn are the same code either way.
      GEMINI_CLI_NO_RELAUNCH: 'true',
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

/** `~/.gemini/settings.json` as docs/agents.md shows it (the CLI test reads it from there). */
export const GEMINI_SETTINGS = JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } } })
