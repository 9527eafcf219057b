/**
 * @module
 * The bed of the tests that check what each surface sends each provider kind: the real gateway
 * (port 0, temporary database) in front of one upstream per wire, each recording what it got —
 * - `oa/<name>`: an OpenAI-compatible chat API (the mock upstream); `oa/drop` drops hosted tools;
 * - `oair/<fixture>`: an OpenAI provider with `wire: responses` (recorded Responses streams);
 * - `an/<fixture>`, `gm/<fixture>`: fakes replaying recorded Anthropic and Gemini answers.
 *
 * @example
 * const bed = await startTranslationBed()
 * const body = await bed.sent('an', 'chat', 'an/text', { tools: [...] })
 * await bed.stop()
 */
import { expect } from 'bun:test'
import { type MockUpstream, startMockUpstream } from '../../scripts/mock-upstream.ts'
import { startFakeAnthropic } from './fake-anthropic.ts'
import { startFakeGemini } from './fake-gemini.ts'
import { startFakeResponses } from './fake-openai-responses.ts'
import type { FakeUpstream } from './fake-upstream.ts'
import { PLANS, startGateway, type TestGateway } from './gateway.ts'

const FEATURES = ['streaming', 'tools', 'parallel_tool_calls', 'json_schema', 'system_messages', 'reasoning']
const model = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  context_window: 200_000,
  max_output_tokens: 8192,
  features: FEATURES,
  ...extra,
})

export type Surface = 'chat' | 'messages' | 'responses'
export type Upstream = 'oa' | 'oair' | 'an' | 'gm'

export interface TranslationBed {
  gw: TestGateway
  mock: MockUpstream
  /** A request on `surface` for `modelId`: one user turn "Hi" plus `extra`. */
  post(surface: Surface, modelId: string, extra?: Record<string, unknown>): Promise<Response>
  /** How many requests `upstream` has had. */
  count(upstream: Upstream): number
  /** Posts, expects a 200 and one upstream request, and returns that request's body. */
  sent(upstream: Upstream, surface: Surface, modelId: string, extra?: Record<string, unknown>): Promise<any>
  /** As `sent`, with the response's headers too. */
  exchange(
    upstream: Upstream,
    surface: Surface,
    modelId: string,
    extra?: Record<string, unknown>,
  ): Promise<{ body: any; headers: Headers }>
  /** Posts, expects a 400 naming `param` and that no upstream was called; returns the error body. */
  refused(surface: Surface, modelId: string, extra: Record<string, unknown>, param: string): Promise<any>
  stop(): Promise<void>
}

export async function startTranslationBed(): Promise<TranslationBed> {
  const [mock, responses, anthropic, gemini] = await Promise.all([
    startMockUpstream({ chunks: 2 }),
    startFakeResponses({ apiKey: 'sk-oair' }),
    startFakeAnthropic({ apiKey: 'sk-ant' }),
    startFakeGemini({ apiKey: 'gemini-key' }),
  ])
  const gw = await startGateway({
    doc: {
      server: { host: '127.0.0.1', port: 0 },
      providers: [
        {
          prefix: 'oa',
          kind: 'openai',
          base_url: mock.url,
          api_key: 'sk-mock',
          models: [
            model('gpt-4o-mini'),
            model('drop', { upstream_name: 'gpt-4o-mini', unsupported_tools: 'drop' }),
          ],
        },
        {
          prefix: 'oair',
          kind: 'openai',
          wire: 'responses',
          base_url: `${responses.url}/v1`,
          api_key: 'sk-oair',
          models: [model('text')],
        },
        {
          prefix: 'an',
          kind: 'anthropic',
          base_url: anthropic.url,
          api_key: 'sk-ant',
          models: [model('text'), model('tool')],
        },
        {
          prefix: 'gm',
          kind: 'gemini',
          base_url: gemini.url,
          api_key: 'gemini-key',
          models: [model('text'), model('tool')],
        },
      ],
      // `tight`: a 1,500-token minute, below one provider-run tool's 2,000-token hold.
      plans: { ...PLANS, tight: { rpm: null, rpd: null, tpm: 1500, models: ['*'] } },
      default_plan: 'unlimited',
    },
  })
  const { key } = await gw.key('translation', 'unlimited')
  const fakes: Record<Exclude<Upstream, 'oa'>, FakeUpstream<string>> = {
    oair: responses,
    an: anthropic,
    gm: gemini,
  }
  const count = (upstream: Upstream) =>
    upstream === 'oa' ? mock.stats.requests : fakes[upstream].requests().length
  const total = () => (['oa', 'oair', 'an', 'gm'] as const).reduce((n, u) => n + count(u), 0)

  const post = (surface: Surface, modelId: string, extra: Record<string, unknown> = {}) => {
    const [path, body] =
      surface === 'chat'
        ? ['/v1/chat/completions', { model: modelId, messages: [{ role: 'user', content: 'Hi' }], ...extra }]
        : surface === 'responses'
          ? ['/v1/responses', { model: modelId, input: 'Hi', ...extra }]
          : [
              '/v1/messages',
              { model: modelId, max_tokens: 4096, messages: [{ role: 'user', content: 'Hi' }], ...extra },
            ]
    return fetch(`${gw.url}${path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        'anthropic-version': '2023-06-01',
      },
      body: JSON.stringify(body),
    })
  }

  const exchange: TranslationBed['exchange'] = async (upstream, surface, modelId, extra = {}) => {
    const before = count(upstream)
    const res = await post(surface, modelId, extra)
    const text = await res.text()
    expect(`${res.status} ${text}`).toStartWith('200 ')
    expect(count(upstream)).toBe(before + 1)
    const body = upstream === 'oa' ? mock.stats.lastBody : fakes[upstream].lastRequest()!.body
    return { body, headers: res.headers }
  }

  return {
    gw,
    mock,
    post,
    count,
    async sent(upstream, surface, modelId, extra = {}) {
      return (await exchange(upstream, surface, modelId, extra)).body
    },
    exchange,
    async refused(surface, modelId, extra, param) {
      const before = total()
      const res = await post(surface, modelId, extra)
      const body = (await res.json()) as any
      expect(`${res.status} ${JSON.stringify(body)}`).toStartWith('400 ')
      if (surface === 'messages') {
        expect(body.type).toBe('error')
        expect(body.error.type).toBe('invalid_request_error')
        expect(body.error.message).toContain(param)
      } else expect(body.error.param).toBe(param)
      expect(total()).toBe(before)
      return body
    },
    async stop() {
      await gw.stop()
      await Promise.all([mock.stop(), responses.stop(), anthropic.stop(), gemini.stop()])
    },
  }
}
