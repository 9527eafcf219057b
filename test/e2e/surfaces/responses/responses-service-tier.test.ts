/**
 * The tier that served a translated Responses request. OpenAI's chat completion (and each of its
 * chunks) names the `service_tier` that served it (`CreateChatCompletionResponse`,
 * `CreateChatCompletionStreamResponse`, shared/reference); the Response the gateway built from it
 * always said `default`. Now the Response says the served tier — at the end of a stream
 * (`response.completed`), while `response.created` / `response.in_progress` say the tier asked, as
 * OpenAI's own Responses stream does (`recorded/openai-responses-*.chunks.txt`: `auto`, then
 * `default`) — and an upstream that names none keeps `default`. The upstream is a local server
 * answering as OpenAI's chat API does (`fake-openai-chat.ts`).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { type ChatAnswer, startFakeOpenAIChat } from '../../../support/fake-openai-chat.ts'
import type { FakeUpstream } from '../../../support/fake-upstream.ts'
import { PLANS, startGateway, type TestGateway } from '../../../support/gateway.ts'
import { readResponsesStream } from '../../../support/responses-bed.ts'

const HEAD = { id: 'chatcmpl-tier', created: 1_700_000_000, model: 'gpt-4o-mini-2024-07-18' }
const USAGE = { prompt_tokens: 8, completion_tokens: 2, total_tokens: 10 }

/** "OK", with `service_tier` on the completion and on every chunk (as OpenAI sends it) when given. */
function okAnswer(tier?: string): ChatAnswer {
  const named = tier === undefined ? {} : { service_tier: tier }
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => ({
    ...HEAD,
    object: 'chat.completion.chunk',
    ...named,
    system_fingerprint: 'fp_tier',
    choices,
    ...extra,
  })
  const choice = (delta: Record<string, unknown>, finish: string | null = null) => ({
    index: 0,
    delta,
    logprobs: null,
    finish_reason: finish,
  })
  return {
    chunks: [
      chunk([choice({ role: 'assistant', content: '', refusal: null })]),
      chunk([choice({ content: 'OK' })]),
      chunk([choice({}, 'stop')]),
      chunk([], { usage: USAGE }),
    ],
    json: {
      ...HEAD,
      object: 'chat.completion',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'OK', refusal: null, annotations: [] },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: USAGE,
      ...named,
      system_fingerprint: 'fp_tier',
    },
  }
}

const model = (name: string) => ({
  name,
  context_window: 128_000,
  max_output_tokens: 16_384,
  features: ['streaming', 'system_messages'],
})

let gw: TestGateway
let upstream: FakeUpstream<string>
let key: string

beforeAll(async () => {
  upstream = await startFakeOpenAIChat({ flex: okAnswer('flex'), untiered: okAnswer() })
  gw = await startGateway({
    doc: {
      server: { host: '127.0.0.1', port: 0 },
      providers: [
        {
          prefix: 'oa',
          kind: 'openai',
          base_url: `${upstream.url}/v1`,
          api_key: 'sk-up',
          models: [model('flex'), model('untiered')],
        },
      ],
      plans: PLANS,
      default_plan: 'unlimited',
    },
  })
  key = (await gw.key('tier', 'unlimited')).key
})
afterAll(async () => {
  await gw?.stop()
  await upstream?.stop()
})

const post = (body: Record<string, unknown>) =>
  fetch(`${gw.url}/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ input: 'Say OK', ...body }),
  })

/** Each response-carrying event's type and `response.service_tier`. */
async function streamedTiers(body: Record<string, unknown>): Promise<Array<[string, unknown]>> {
  const events = await readResponsesStream(await post({ ...body, stream: true }))
  return events.filter((e) => e.data.response).map((e) => [e.event, e.data.response.service_tier])
}

describe('an OpenAI chat upstream that names the tier (flex)', () => {
  test('JSON: the Response reports service_tier flex', async () => {
    const res = await post({ model: 'oa/flex', service_tier: 'flex' })
    expect(res.status).toBe(200)
    const body = (await res.json()) as { service_tier: string }
    expect(body.service_tier).toBe('flex')
    expect(upstream.lastRequest()?.body?.service_tier).toBe('flex')
  })

  test('stream: created and in_progress say the tier asked (auto), completed the tier served (flex)', async () => {
    expect(await streamedTiers({ model: 'oa/flex', service_tier: 'auto' })).toEqual([
      ['response.created', 'auto'],
      ['response.in_progress', 'auto'],
      ['response.completed', 'flex'],
    ])
  })

  test('the OpenAI SDK reads response.service_tier, created and streamed', async () => {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 })
    const created = await client.responses.create({ model: 'oa/flex', input: 'Say OK', service_tier: 'flex' })
    expect(created.service_tier).toBe('flex')
    expect(created.output_text).toBe('OK')
    const final = await client.responses
      .stream({ model: 'oa/flex', input: 'Say OK', service_tier: 'flex' })
      .finalResponse()
    expect(final.service_tier).toBe('flex')
    expect(final.output_text).toBe('OK')
  })
})

describe('an upstream that names no tier: default, as before', () => {
  test('JSON, no tier asked', async () => {
    expect(
      ((await (await post({ model: 'oa/untiered' })).json()) as { service_tier: string }).service_tier,
    ).toBe('default')
  })

  test('stream, no tier asked: default throughout', async () => {
    expect(await streamedTiers({ model: 'oa/untiered' })).toEqual([
      ['response.created', 'default'],
      ['response.in_progress', 'default'],
      ['response.completed', 'default'],
    ])
  })

  test('stream, flex asked but not named back: flex while in progress, default at the end', async () => {
    expect(await streamedTiers({ model: 'oa/untiered', service_tier: 'flex' })).toEqual([
      ['response.created', 'flex'],
      ['response.in_progress', 'flex'],
      ['response.completed', 'default'],
    ])
  })
})
