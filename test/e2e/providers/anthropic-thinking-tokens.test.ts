/**
 * Anthropic reports how much of the output was thinking (`usage.output_tokens_details
 * .thinking_tokens`, inside `output_tokens`). Translated, that is OpenAI's `reasoning_tokens`
 * — what the openai SDK's chat and Responses usage, the AI SDK's `reasoningTokens` and
 * LangChain's `output_token_details.reasoning` show — and on every route the model's `reasoning`
 * price bills those tokens.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { type FakeUpstream, startFakeAnthropic } from '../../support/fake-anthropic.ts'
import { startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'

const API_KEY = 'sk-ant-thinking-tokens'
/** The recording: 40 output tokens, 32 of them thinking. */
const OUTPUT = 40
const THINKING = 32
/** Per 1M tokens: an output token costs 1 µ$, a thinking token 10 µ$. */
const PRICING = { input: 0, output: 1, reasoning: 10 }
const COST_USD = ((OUTPUT - THINKING) * 1 + THINKING * 10) / 1_000_000

let fake: FakeUpstream<string>
let gw: TestGateway
let key: string
beforeAll(async () => {
  fake = await startFakeAnthropic({ apiKey: API_KEY })
  gw = await startGateway({
    doc: testConfigDoc({
      usage: { flush_ms: 20 },
      providers: [
        {
          prefix: 'anthropic',
          kind: 'anthropic',
          base_url: fake.url,
          api_key: API_KEY,
          models: [
            {
              name: 'reasoned',
              context_window: 200_000,
              max_output_tokens: 8192,
              features: ['streaming', 'system_messages', 'reasoning'],
              pricing: PRICING,
            },
          ],
        },
      ],
    }),
  })
})
afterAll(async () => {
  await gw.stop()
  await fake.stop()
})

const openai = () => new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 })
const hi = [{ role: 'user' as const, content: '2 + 2?' }]

async function costOf(): Promise<{ requests: number; cost_usd: number }> {
  await gw.deps.recorder.flush()
  const res = await fetch(`${gw.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })
  return ((await res.json()) as any).usage.by_model['anthropic/reasoned']
}

test('chat, JSON and stream: completion_tokens_details.reasoning_tokens; billed at the reasoning price', async () => {
  key = (await gw.key('chat-thinking', 'unlimited')).key
  const done = await openai().chat.completions.create({ model: 'anthropic/reasoned', messages: hi })
  expect(done.usage?.completion_tokens).toBe(OUTPUT)
  expect(done.usage?.completion_tokens_details?.reasoning_tokens).toBe(THINKING)
  const streamed = await openai()
    .chat.completions.stream({
      model: 'anthropic/reasoned',
      messages: hi,
      stream_options: { include_usage: true },
    })
    .finalChatCompletion()
  expect(streamed.usage?.completion_tokens_details?.reasoning_tokens).toBe(THINKING)
  const usage = await costOf()
  expect(usage.requests).toBe(2)
  expect(usage.cost_usd).toBeCloseTo(2 * COST_USD, 9)
})

test('Responses, JSON and stream: output_tokens_details.reasoning_tokens', async () => {
  key = (await gw.key('responses-thinking', 'unlimited')).key
  const done = await openai().responses.create({ model: 'anthropic/reasoned', input: '2 + 2?' })
  expect(done.usage?.output_tokens_details.reasoning_tokens).toBe(THINKING)
  const streamed = await openai()
    .responses.stream({ model: 'anthropic/reasoned', input: '2 + 2?' })
    .finalResponse()
  expect(streamed.usage?.output_tokens_details.reasoning_tokens).toBe(THINKING)
})

test('Messages pass-through (the body as Anthropic sent it): the thinking tokens billed at the reasoning price', async () => {
  key = (await gw.key('messages-thinking', 'unlimited')).key
  const client = new Anthropic({ apiKey: key, baseURL: gw.url, maxRetries: 0 })
  const body = { model: 'anthropic/reasoned', max_tokens: 2048, messages: hi }
  const done = await client.messages.create(body)
  expect(done.usage.output_tokens).toBe(OUTPUT)
  await client.messages.stream(body).finalMessage()
  const usage = await costOf()
  expect(usage.requests).toBe(2)
  expect(usage.cost_usd).toBeCloseTo(2 * COST_USD, 9)
})
