/**
 * Reasoning on translated routes. The bug: chat `reasoning_effort`, Responses `reasoning.effort`
 * and Messages `thinking` passed the `reasoning` feature check and then reached anthropic and
 * gemini upstreams as nothing at all, so the model did not reason; and what an upstream did think
 * never came back. The real gateway (port 0) in front of the fake Anthropic and Gemini, which
 * record what they receive:
 * - each surface's reasoning request becomes a `thinking` object Anthropic accepts (`budget_tokens`
 *   ≥ 1,024 and < `max_tokens`, no temperature but the default) or a Gemini
 *   `generationConfig.thinkingConfig` (`thinkingBudget`, `includeThoughts`);
 * - what the upstream thought comes back as each surface maps reasoning: chat `reasoning_content`,
 *   Messages `thinking` blocks, a Responses `reasoning` item.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { type FakeUpstream, startFakeAnthropic } from '../../support/fake-anthropic.ts'
import { startFakeGemini } from '../../support/fake-gemini.ts'
import { PLANS, startGateway, type TestGateway } from '../../support/gateway.ts'

const ANTHROPIC_KEY = 'sk-ant-reasoning-0001'
const GEMINI_KEY = 'gemini-reasoning-0002'
const FEATURES = ['streaming', 'tools', 'system_messages', 'reasoning']
const model = (name: string, max: number, extra: Record<string, unknown> = {}) => ({
  name,
  context_window: 200_000,
  max_output_tokens: max,
  features: FEATURES,
  ...extra,
})

let gw: TestGateway
let anthropic: FakeUpstream<string>
let gemini: FakeUpstream<string>
let key: string

beforeAll(async () => {
  ;[anthropic, gemini] = await Promise.all([
    startFakeAnthropic({ apiKey: ANTHROPIC_KEY }),
    startFakeGemini({ apiKey: GEMINI_KEY }),
  ])
  gw = await startGateway({
    doc: {
      server: { host: '127.0.0.1', port: 0 },
      providers: [
        {
          prefix: 'an',
          kind: 'anthropic',
          base_url: anthropic.url,
          api_key: ANTHROPIC_KEY,
          models: [
            model('thinking', 64_000, { temperature: { min: 0, max: 1 } }),
            // The same recording behind a model whose whole output is 4,096 tokens.
            model('short', 4096, { upstream_name: 'thinking', temperature: { min: 0, max: 1 } }),
          ],
        },
        {
          prefix: 'gm',
          kind: 'gemini',
          base_url: gemini.url,
          api_key: GEMINI_KEY,
          models: [
            model('thinking', 65_536),
            // Gemini 2.5 Pro and Gemini 3 Pro cannot stop thinking.
            model('always', 65_536, { upstream_name: 'thinking', always_reasons: true }),
            // No reasoning feature: asked for none, it has nothing to turn off.
            model('plain', 65_536, { upstream_name: 'thinking', features: ['streaming', 'system_messages'] }),
          ],
        },
      ],
      plans: PLANS,
      default_plan: 'unlimited',
    },
  })
  key = (await gw.key('reasoner', 'unlimited')).key
})
afterAll(async () => {
  await gw.stop()
  await Promise.all([anthropic.stop(), gemini.stop()])
})

type Surface = 'chat' | 'responses' | 'messages'

/** A one-turn request on `surface` for `model`, with `extra` fields. */
function post(surface: Surface, modelId: string, extra: Record<string, unknown> = {}): Promise<Response> {
  const [path, body] =
    surface === 'chat'
      ? ['/v1/chat/completions', { model: modelId, messages: [{ role: 'user', content: 'Hi' }], ...extra }]
      : surface === 'responses'
        ? ['/v1/responses', { model: modelId, input: 'Hi', ...extra }]
        : [
            '/v1/messages',
            { model: modelId, max_tokens: 16_000, messages: [{ role: 'user', content: 'Hi' }], ...extra },
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

/** The body the upstream got for one request. */
async function sent(
  upstream: FakeUpstream<string>,
  surface: Surface,
  modelId: string,
  extra: Record<string, unknown>,
) {
  const before = upstream.requests().length
  const res = await post(surface, modelId, extra)
  expect(res.status).toBe(200)
  await res.text()
  const got = upstream.requests().slice(before)
  expect(got).toHaveLength(1)
  return got[0]!.body
}

/** Anthropic's rules for `thinking` (extended thinking docs, "Feature compatibility"). */
function expectValidAnthropicThinking(body: any): void {
  expect(body.thinking.type).toBe('enabled')
  expect(Number.isInteger(body.thinking.budget_tokens)).toBe(true)
  expect(body.thinking.budget_tokens).toBeGreaterThanOrEqual(1024)
  expect(body.thinking.budget_tokens).toBeLessThan(body.max_tokens)
  if ('temperature' in body) expect(body.temperature).toBe(1)
  if ('top_p' in body) expect(body.top_p).toBeGreaterThanOrEqual(0.95)
  expect(body.tool_choice?.type ?? 'auto').toMatch(/^(auto|none)$/)
  expect(body.messages.at(-1).role).toBe('user')
}

/** Gemini's `thinkingConfig`: a budget every 2.5 model takes, never beside `thinkingLevel`. */
function expectValidGeminiThinking(body: any): void {
  const config = body.generationConfig.thinkingConfig
  expect(Number.isInteger(config.thinkingBudget)).toBe(true)
  expect(config.thinkingBudget).toBeGreaterThanOrEqual(0)
  expect(config.thinkingBudget).toBeLessThanOrEqual(24_576)
  expect(config.thinkingLevel).toBeUndefined()
}

describe('what reaches an anthropic upstream', () => {
  test.each([
    ['chat', { reasoning_effort: 'minimal' }, 1024],
    ['chat', { reasoning_effort: 'low' }, 1024],
    ['chat', { reasoning_effort: 'medium' }, 8192],
    ['chat', { reasoning_effort: 'high' }, 24_576],
    ['chat', { reasoning_effort: 'xhigh' }, 32_000],
    ['responses', { reasoning: { effort: 'low' } }, 1024],
    ['responses', { reasoning: { effort: 'medium' } }, 8192],
    ['responses', { reasoning: { effort: 'high' } }, 24_576],
  ] as const)(
    '%s %j → thinking with budget_tokens %d, max_tokens the model maximum',
    async (surface, extra, budget) => {
      const body = await sent(anthropic, surface, 'an/thinking', extra)
      expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: budget })
      expect(body.max_tokens).toBe(64_000)
      expectValidAnthropicThinking(body)
    },
  )

  test.each([
    ['chat', 'an/thinking', { reasoning_effort: 'high', max_tokens: 4096 }, 4096],
    ['chat', 'an/thinking', { reasoning_effort: 'medium', max_completion_tokens: 2000 }, 2000],
    ['responses', 'an/thinking', { reasoning: { effort: 'high' }, max_output_tokens: 1400 }, 1400],
    ['chat', 'an/short', { reasoning_effort: 'high' }, 4096],
  ] as const)(
    '%s to %s %j: the budget fits under max_tokens %d, which stays the client’s',
    async (surface, id, extra, max) => {
      const body = await sent(anthropic, surface, id, extra)
      expect(body.max_tokens).toBe(max)
      expect(body.thinking.budget_tokens).toBe(Math.max(1024, Math.floor((max * 3) / 4)))
      expectValidAnthropicThinking(body)
    },
  )

  test('top_p within 0.95–1 and temperature 1 are accepted beside thinking; the temperature is not sent', async () => {
    const body = await sent(anthropic, 'chat', 'an/thinking', {
      reasoning_effort: 'low',
      temperature: 1,
      top_p: 0.97,
    })
    expect(body.top_p).toBe(0.97)
    expect('temperature' in body).toBe(false)
    expectValidAnthropicThinking(body)
  })

  test('reasoning_effort none asks for no thinking', async () => {
    const body = await sent(anthropic, 'chat', 'an/thinking', { reasoning_effort: 'none' })
    expect('thinking' in body).toBe(false)
  })

  test('Messages to an anthropic model passes thinking through as the client wrote it', async () => {
    const thinking = { type: 'enabled', budget_tokens: 5000 }
    const body = await sent(anthropic, 'messages', 'an/thinking', { thinking })
    expect(body.thinking).toEqual(thinking)
  })
})

describe('requests Anthropic would refuse while thinking: 400 naming the field, nothing sent', () => {
  test.each([
    [{ reasoning_effort: 'low', temperature: 0.5 }, 'temperature', 'unsupported_feature'],
    [{ reasoning_effort: 'low', top_p: 0.5 }, 'top_p', 'unsupported_feature'],
    [
      {
        reasoning_effort: 'low',
        tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
        tool_choice: 'required',
      },
      'tool_choice',
      'unsupported_feature',
    ],
    [
      {
        reasoning_effort: 'low',
        messages: [
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: 'Well,' },
        ],
      },
      'messages',
      'unsupported_feature',
    ],
    [{ reasoning_effort: 'low', max_tokens: 1024 }, 'max_tokens', 'invalid_value'],
    [{ reasoning_effort: 'extreme' }, 'reasoning_effort', 'invalid_value'],
  ] as const)('%j → %s', async (extra, param, code) => {
    const before = anthropic.requests().length
    const res = await post('chat', 'an/thinking', extra)
    expect(res.status).toBe(400)
    const { error } = (await res.json()) as any
    expect(error).toMatchObject({ param, code })
    expect(anthropic.requests().length).toBe(before)
  })
})

describe('what reaches a gemini upstream', () => {
  test.each([
    ['chat', { reasoning_effort: 'minimal' }, 1024],
    ['chat', { reasoning_effort: 'low' }, 1024],
    ['chat', { reasoning_effort: 'medium' }, 8192],
    ['chat', { reasoning_effort: 'high' }, 24_576],
    ['chat', { reasoning_effort: 'xhigh' }, 24_576],
    ['responses', { reasoning: { effort: 'low' } }, 1024],
    ['responses', { reasoning: { effort: 'high' } }, 24_576],
    ['messages', { thinking: { type: 'enabled', budget_tokens: 1024 } }, 1024],
    ['messages', { thinking: { type: 'enabled', budget_tokens: 10_000 } }, 8192],
    ['messages', { thinking: { type: 'enabled', budget_tokens: 15_999 } }, 8192],
    ['messages', { thinking: { type: 'adaptive' } }, 8192],
  ] as const)(
    '%s %j → thinkingConfig with thinkingBudget %d and includeThoughts',
    async (surface, extra, budget) => {
      const body = await sent(gemini, surface, 'gm/thinking', extra)
      expect(body.generationConfig.thinkingConfig).toEqual({ thinkingBudget: budget, includeThoughts: true })
      expectValidGeminiThinking(body)
    },
  )

  // The bug: "none" sent no thinkingConfig, so Gemini 2.5 Flash thought by default anyway; and
  // Messages' thinking disabled was not turned into "none" at all.
  test.each([
    ['chat', { reasoning_effort: 'none' }],
    ['responses', { reasoning: { effort: 'none' } }],
    ['messages', { thinking: { type: 'disabled' } }],
  ] as const)('%s %j turns thinking off: thinkingBudget 0, no thoughts asked for', async (surface, extra) => {
    const body = await sent(gemini, surface, 'gm/thinking', extra)
    expect(body.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 0 })
  })

  test.each([
    ['chat', { reasoning_effort: 'none' }, 'reasoning_effort'],
    ['responses', { reasoning: { effort: 'none' } }, 'reasoning.effort'],
  ] as const)(
    'a model that cannot stop thinking (always_reasons): %s %j → 400 naming %s, nothing sent',
    async (surface, extra, param) => {
      const before = gemini.requests().length
      const res = await post(surface, 'gm/always', extra)
      expect(res.status).toBe(400)
      expect(((await res.json()) as any).error).toMatchObject({ param, code: 'unsupported_value' })
      expect(gemini.requests().length).toBe(before)
    },
  )

  test('Messages thinking disabled to a model that cannot stop thinking → 400 naming thinking, nothing sent', async () => {
    const before = gemini.requests().length
    const res = await post('messages', 'gm/always', { thinking: { type: 'disabled' } })
    expect(res.status).toBe(400)
    expect(res.headers.get('x-switchyard-error-code')).toBe('unsupported_value')
    const { error } = (await res.json()) as any
    expect(error.type).toBe('invalid_request_error')
    expect(error.message).toStartWith('thinking {"type": "disabled"}')
    expect(error.message).not.toContain('reasoning_effort')
    expect(gemini.requests().length).toBe(before)
  })

  test('Messages thinking disabled to a model without reasoning: nothing about thinking is sent', async () => {
    const body = await sent(gemini, 'messages', 'gm/plain', { thinking: { type: 'disabled' } })
    expect(body.generationConfig?.thinkingConfig).toBeUndefined()
  })

  test('a model that cannot stop thinking still thinks as asked', async () => {
    const body = await sent(gemini, 'chat', 'gm/always', { reasoning_effort: 'low' })
    expect(body.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 1024, includeThoughts: true })
  })

  test('an unknown effort → 400 invalid_value naming reasoning_effort, nothing sent', async () => {
    const before = gemini.requests().length
    const res = await post('chat', 'gm/thinking', { reasoning_effort: 'extreme' })
    expect(res.status).toBe(400)
    expect(((await res.json()) as any).error).toMatchObject({
      param: 'reasoning_effort',
      code: 'invalid_value',
    })
    expect(gemini.requests().length).toBe(before)
  })
})

/** The `data:` payloads of an SSE body, `[DONE]` left out. */
function events(body: string): any[] {
  return body
    .split('\n')
    .filter((l) => l.startsWith('data:') && l.slice(5).trim() !== '[DONE]')
    .map((l) => JSON.parse(l.slice(5)))
}

/** What the recordings thought and answered, stream and JSON (each from its own request). */
const THOUGHT = {
  an: {
    stream: {
      thinking: 'The previous result was 925. Now I need to divide that by 5.\n\n925 ÷ 5 = 185',
      text: '925 ÷ 5 = 185',
    },
    json: { thinking: '925 divided by 5 = 185', text: '925 ÷ 5 = 185' },
  },
  gm: {
    stream: {
      thinking:
        '**Counting the letters**\n\nI spell strawberry out and mark each r. Three of them: st-r-awbe-r-r-y.',
      text: "There are **3** r's in strawberry.",
    },
    json: {
      thinking: '**Counting the letters**\n\nStrawberry has an r after the t and two before the y.',
      text: "There are **3** r's in strawberry.",
    },
  },
} as const

const ASK = {
  chat: { reasoning_effort: 'medium' },
  responses: { reasoning: { effort: 'medium' } },
  messages: { thinking: { type: 'enabled', budget_tokens: 8192 } },
} as const

/** Thinking, then text, as the client of `surface` reads them from a JSON answer. */
function readJson(surface: Surface, body: any): { thinking: string; text: string } {
  if (surface === 'chat') {
    const m = body.choices[0].message
    return { thinking: m.reasoning_content, text: m.content }
  }
  if (surface === 'responses') {
    const [reasoning, message] = body.output
    expect(reasoning.type).toBe('reasoning')
    expect(message.type).toBe('message')
    return {
      thinking: reasoning.summary.map((s: any) => s.text).join(''),
      text: body.output[1].content[0].text,
    }
  }
  const [thinking, text] = body.content
  expect(thinking.type).toBe('thinking')
  expect(text.type).toBe('text')
  return { thinking: thinking.thinking, text: text.text }
}

/** Thinking, then text, as the client of `surface` reads them from a stream; thinking comes first. */
function readStreamed(surface: Surface, body: string): { thinking: string; text: string } {
  let thinking = ''
  let text = ''
  for (const e of events(body)) {
    let t = ''
    let c = ''
    if (surface === 'chat') {
      t = e.choices?.[0]?.delta?.reasoning_content ?? ''
      c = e.choices?.[0]?.delta?.content ?? ''
    } else if (surface === 'responses') {
      if (e.type === 'response.reasoning_summary_text.delta') t = e.delta
      if (e.type === 'response.output_text.delta') c = e.delta
    } else if (e.type === 'content_block_delta') {
      t = e.delta.thinking ?? ''
      c = e.delta.text ?? ''
    }
    if (t) expect(text).toBe('')
    thinking += t
    text += c
  }
  return { thinking, text }
}

describe('what the upstream thought comes back', () => {
  const routes: Array<[Surface, 'an' | 'gm']> = [
    ['chat', 'an'],
    ['responses', 'an'],
    ['chat', 'gm'],
    ['responses', 'gm'],
    ['messages', 'gm'],
  ]
  test.each(routes)('%s from %s, JSON', async (surface, prefix) => {
    const res = await post(surface, `${prefix}/thinking`, ASK[surface])
    expect(res.status).toBe(200)
    expect(readJson(surface, await res.json())).toEqual(THOUGHT[prefix].json)
  })

  test.each(routes)('%s from %s, streamed', async (surface, prefix) => {
    const res = await post(surface, `${prefix}/thinking`, { ...ASK[surface], stream: true })
    expect(res.status).toBe(200)
    expect(readStreamed(surface, await res.text())).toEqual(THOUGHT[prefix].stream)
  })
})

// Anthropic's usage says how much of the output was thinking (output_tokens_details, which the
// Anthropic SDK keeps from message_delta); Gemini's thoughtsTokenCount is that count.
describe('how much of the output was thinking, on the Messages surface', () => {
  test.each([false, true])(
    'messages from gm, stream %p: output_tokens_details.thinking_tokens',
    async (stream) => {
      const client = new Anthropic({ apiKey: key, baseURL: gw.url, maxRetries: 0 })
      const body = {
        model: 'gm/thinking',
        max_tokens: 16_000,
        messages: [{ role: 'user' as const, content: 'Hi' }],
      }
      const message = stream
        ? await client.messages.stream(body).finalMessage()
        : await client.messages.create(body)
      const details = (message.usage as { output_tokens_details?: { thinking_tokens: number } })
        .output_tokens_details
      // The fixtures' thoughtsTokenCount: 72 in the JSON answer, 88 at the stream's end.
      expect(details?.thinking_tokens).toBe(stream ? 88 : 72)
      expect(message.usage.output_tokens).toBeGreaterThan(details!.thinking_tokens)
    },
  )
})
