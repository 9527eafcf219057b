/**
 * Codex CLI itself (`codex exec`, from the test-client package) → the real gateway's
 * `POST /v1/responses` → an OpenAI-compatible chat upstream (translated), Anthropic recordings
 * (translated) and a Responses upstream (pass-through); plus, on the starter config's demo model
 * (as shipped in `switchyard.example.yaml`), a function-call round trip in which Codex runs the
 * `exec_command` the model asks for and sends its output back. Each Codex request is counted once.
 * The demo's plain turn, traced to prove Codex talks only to 127.0.0.1, is readme-commands.test.ts's
 * (the README's one-liner as pasted): not run a second time here.
 * The runs are independent (a key each; the mock and the Responses upstream each one test's), so
 * they run at once: each is mostly Codex starting up.
 * Skipped, with a printed line, when Codex is not installed.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type MockUpstream, startMockUpstream } from '../../../scripts/mock-upstream.ts'
import { quotePlaceholders } from '../../../src/config/yaml.ts'
import { codexBinary, runCodex } from '../../support/codex.ts'
import { startFakeAnthropic } from '../../support/fake-anthropic.ts'
import { type FakeResponses, startFakeResponses } from '../../support/fake-openai-responses.ts'
import type { FakeUpstream } from '../../support/fake-upstream.ts'
import { PLANS, startGateway, type TestGateway } from '../../support/gateway.ts'

const codex = codexBinary()
if (!codex)
  console.log(
    'Codex is not installed (npm install --prefix test/clients): skipping test/e2e/clients/codex.test.ts',
  )

const model = (name: string) => ({
  name,
  context_window: 200_000,
  max_output_tokens: 8192,
  features: ['streaming', 'tools', 'system_messages'],
  unsupported_tools: 'drop',
})

describe.skipIf(!codex)('Codex CLI through Switchyard', () => {
  let gw: TestGateway
  let mock: MockUpstream
  let anthropic: FakeUpstream<string>
  let responses: FakeResponses

  beforeAll(async () => {
    const starter = Bun.YAML.parse(
      quotePlaceholders(await Bun.file(new URL('../../../switchyard.example.yaml', import.meta.url)).text()),
    ) as { providers: Array<{ prefix: string }> }
    const demo = starter.providers.find((p) => p.prefix === 'demo')!
    ;[mock, anthropic] = await Promise.all([
      startMockUpstream({ chunks: 4 }),
      startFakeAnthropic({ apiKey: 'sk-ant-test' }),
    ])
    responses = await startFakeResponses({ apiKey: 'sk-oai-test' })
    gw = await startGateway({
      doc: {
        server: { host: '127.0.0.1', port: 0 },
        usage: { flush_ms: 20 },
        providers: [
          demo,
          {
            prefix: 'openai',
            kind: 'openai',
            base_url: mock.url,
            api_key: 'sk-mock',
            models: [model('text-only')],
          },
          {
            prefix: 'anthropic',
            kind: 'anthropic',
            base_url: anthropic.url,
            api_key: 'sk-ant-test',
            models: [model('text')],
          },
          {
            prefix: 'oair',
            kind: 'openai',
            wire: 'responses',
            base_url: `${responses.url}/v1`,
            api_key: 'sk-oai-test',
            models: [{ ...model('text'), unsupported_tools: undefined }],
          },
        ],
        plans: PLANS,
        default_plan: 'unlimited',
      },
    })
  })
  afterAll(async () => {
    await gw?.stop()
    await Promise.all([mock?.stop(), anthropic?.stop(), responses?.stop()])
  })

  /** Requests `GET /v1/usage` counted for `id` on this key. */
  async function requestsOf(key: string, id: string): Promise<number> {
    await gw.deps.recorder.flush()
    const res = await fetch(`${gw.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })
    return ((await res.json()) as any).usage.by_model[id]?.requests ?? 0
  }

  const run = async (id: string, prompt: string, extra: { fullAccess?: boolean } = {}) => {
    const { key } = await gw.key(`codex-${crypto.randomUUID()}`, 'unlimited')
    const out = await runCodex(codex!, { baseUrl: `${gw.url}/v1`, key, model: id, prompt, ...extra })
    if (out.code !== 0) console.log(out.stderr.slice(-3000))
    return { ...out, key }
  }

  test.concurrent('completes a turn through an OpenAI-compatible chat upstream (translated)', async () => {
    const out = await run('openai/text-only', 'Say hello')
    expect(out.code).toBe(0)
    expect(out.stdout).toContain('Hello from the mock')
    expect(await requestsOf(out.key, 'openai/text-only')).toBe(1)
    const sent = (mock.stats.lastBody as any).tools.map((t: any) => t.function.name)
    expect(sent).toContain('exec_command')
    expect(sent).toContain('spawn_agent') // expanded from Codex's namespace tool
  }, 90_000)

  test.concurrent('completes a turn through Anthropic (recorded stream, translated)', async () => {
    const out = await run('anthropic/text', 'How are you?')
    expect(out.code).toBe(0)
    expect(out.stdout).toContain("Hello! I'm doing well")
    expect(await requestsOf(out.key, 'anthropic/text')).toBe(1)
  }, 90_000)

  test.concurrent('completes a turn through a Responses upstream (pass-through, hosted tools kept)', async () => {
    const out = await run('oair/text', 'Say OK')
    expect(out.code).toBe(0)
    expect(out.stdout.trim()).toEndWith('OK')
    expect(await requestsOf(out.key, 'oair/text')).toBe(1)
    const sent = responses.lastRequest()!.body
    expect(sent.model).toBe('text')
    expect(sent.store).toBe(false)
    expect(sent.tools.some((t: { type: string }) => t.type === 'web_search')).toBe(true)
  }, 90_000)

  test.concurrent('function-call round trip: Codex runs exec_command and sends back its output', async () => {
    const marker = `round-trip-${Date.now()}`
    const out = await run('demo/echo', `Please use exec_command {"cmd": "echo ${marker}"}`, {
      fullAccess: true,
    })
    expect(out.code).toBe(0)
    // The demo model answers a tool result with its text: the command's output came back.
    expect(out.stdout).toContain('Tool result received:')
    expect(out.stdout).toContain(marker)
    expect(await requestsOf(out.key, 'demo/echo')).toBe(2)
  }, 90_000)
})
