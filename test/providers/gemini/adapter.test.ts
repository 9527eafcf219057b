import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { ChatRequest } from '../../../src/operations/chat.ts'
import { createGeminiAdapter } from '../../../src/providers/gemini/index.ts'
import { thoughtSignatureOf } from '../../../src/providers/gemini/tool-call-ids.ts'
import {
  type FakeUpstream,
  GEMINI_FIXTURES,
  type GeminiFixture,
  startFakeGemini,
} from '../../support/fake-gemini.ts'
import { validateChunk, validateResponse } from '../../support/openai-schemas.ts'
import { CONVERSATION, CONVERSATION_BODY } from './conversation.ts'
import { API_KEY, assemble, callContext, drain, geminiProvider, planItems, readEvents } from './helpers.ts'

let fake: FakeUpstream<GeminiFixture>
beforeAll(async () => {
  fake = await startFakeGemini({ apiKey: API_KEY })
})
afterAll(() => fake.stop())

const request = (model: string, extra: Partial<ChatRequest> = {}): ChatRequest => ({
  model,
  messages: [{ role: 'user', content: 'How many r are in strawberry?' }],
  max_tokens: 512,
  temperature: 1,
  ...extra,
})

async function complete(model: string, extra: Partial<ChatRequest> = {}) {
  const provider = geminiProvider(fake.url)
  const res = await createGeminiAdapter(provider).complete(request(model, extra), callContext(provider))
  expect(validateResponse(res)).toBeNull()
  return res
}

async function stream(model: string, extra: Partial<ChatRequest> = {}) {
  const provider = geminiProvider(fake.url)
  const out = await drain(
    planItems(await createGeminiAdapter(provider).stream(request(model, extra), callContext(provider))),
  )
  for (const chunk of out.chunks) expect(validateChunk(chunk)).toBeNull()
  expect(out.error).toBeUndefined()
  return out
}

/** Visible text of a recorded stream: every non-thought text part, in order. */
async function recordedText(fixture: 'text' | 'two-tools'): Promise<string> {
  const events = await readEvents(GEMINI_FIXTURES[fixture].chunks)
  return events
    .flatMap((e) => e.candidates[0].content.parts)
    .filter((p: any) => typeof p.text === 'string' && !p.thought)
    .map((p: any) => p.text)
    .join('')
}

describe('Gemini adapter, non-streaming', () => {
  test('sends the exact body to :generateContent with the key header', async () => {
    const provider = geminiProvider(fake.url)
    await createGeminiAdapter(provider).complete({ ...CONVERSATION, model: 'text' }, callContext(provider))
    const seen = fake.lastRequest()!
    expect(seen.method).toBe('POST')
    expect(seen.path).toBe('/v1beta/models/text:generateContent')
    expect(seen.headers['x-goog-api-key']).toBe(API_KEY)
    expect(seen.headers['content-type']).toBe('application/json')
    expect(seen.body).toEqual(CONVERSATION_BODY)
  })

  test('recorded text response → content without thoughts, stop, usage with thinking tokens', async () => {
    const recorded = await Bun.file(GEMINI_FIXTURES.text.json).json()
    const res = await complete('text')
    expect(res.id).toBe('chatcmpl-Un6LacrVMcjUxs0PmJfWoQc')
    expect(res.model).toBe('text')
    expect(res.choices).toEqual([
      {
        index: 0,
        message: { role: 'assistant', content: recorded.candidates[0].content.parts[0].text, refusal: null },
        finish_reason: 'stop',
        logprobs: null,
      },
    ])
    expect(res.usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 28 + 244, total_tokens: 281 })
    expect(res.usage?.completion_tokens_details).toEqual({ reasoning_tokens: 244 })
  })

  test('recorded function call → tool_calls (STOP reads as tool_calls), id carrying the signature', async () => {
    const res = await complete('tool')
    const choice = res.choices[0]!
    expect(choice.finish_reason).toBe('tool_calls')
    expect(choice.message.content).toBeNull()
    const [call] = choice.message.tool_calls!
    expect(call!.function).toEqual({ name: 'weather', arguments: '{"location":"San Francisco"}' })
    expect(call!.id).toStartWith('call_')
    expect(thoughtSignatureOf(call!.id)).toBe('EskgCsYgAb4+9vtF7/499YQS2bjZs3xcQI')
    expect(res.usage).toMatchObject({ prompt_tokens: 29, completion_tokens: 15 + 893, total_tokens: 937 })
  })

  test('two function calls → two tool calls with distinct ids, the thought apart from the text', async () => {
    const res = await complete('two-tools')
    const message = res.choices[0]!.message
    expect(message.content).toBe('Checking the weather in both cities.')
    expect(message.reasoning_content).toBe('I should call the tool for each city.')
    expect(message.tool_calls?.map((c) => [c.function.name, JSON.parse(c.function.arguments)])).toEqual([
      ['get_weather', { city: 'Paris', unit: 'c' }],
      ['get_weather', { city: 'London' }],
    ])
    expect(new Set(message.tool_calls?.map((c) => c.id)).size).toBe(2)
    expect(res.usage).toMatchObject({ prompt_tokens: 41, completion_tokens: 71, total_tokens: 112 })
  })

  test('thought summaries (includeThoughts) → reasoning_content, the answer → content', async () => {
    const res = await complete('thinking')
    expect(res.choices[0]!.message).toEqual({
      role: 'assistant',
      content: "There are **3** r's in strawberry.",
      reasoning_content: '**Counting the letters**\n\nStrawberry has an r after the t and two before the y.',
      refusal: null,
    })
    expect(res.usage?.completion_tokens_details).toEqual({ reasoning_tokens: 72 })
  })

  test('SAFETY → content_filter; a blocked prompt → one content_filter choice without text', async () => {
    expect((await complete('safety')).choices[0]!.finish_reason).toBe('content_filter')
    const blocked = await complete('prompt-blocked')
    expect(blocked.choices).toEqual([
      {
        index: 0,
        message: { role: 'assistant', content: null, refusal: null },
        finish_reason: 'content_filter',
        logprobs: null,
      },
    ])
    expect(blocked.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 0, total_tokens: 12 })
  })
})

describe('Gemini adapter, streaming', () => {
  test('asks :streamGenerateContent?alt=sse', async () => {
    await stream('text')
    expect(fake.lastRequest()!.path).toBe('/v1beta/models/text:streamGenerateContent?alt=sse')
    expect(fake.lastRequest()!.headers['x-goog-api-key']).toBe(API_KEY)
  })

  test('recorded text stream → role first, text equal to the parts, stop, then the last usage', async () => {
    const { chunks } = await stream('text')
    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '' })
    const out = assemble(chunks)
    expect(out.content).toBe(await recordedText('text'))
    expect(out.finish).toBe('stop')
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('stop')
    expect(chunks.at(-1)!.choices).toEqual([])
    expect(out.usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 23 + 185, total_tokens: 217 })
    expect(new Set(chunks.map((c) => c.id))).toEqual(new Set(['chatcmpl-bH6LaZW8Fp_3nsEPqtaSwQ4']))
  })

  test('recorded function call stream → one whole tool call delta, finish tool_calls', async () => {
    const { chunks } = await stream('tool')
    const deltas = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? [])
    expect(deltas).toHaveLength(1)
    expect(deltas[0]).toMatchObject({
      index: 0,
      type: 'function',
      function: { name: 'weather', arguments: '{"location":"San Francisco"}' },
    })
    expect(thoughtSignatureOf(deltas[0]!.id)).toStartWith('EqUCCqICAb4+9vsh8Pd5')
    const out = assemble(chunks)
    expect(out.finish).toBe('tool_calls')
    expect(out.usage).toMatchObject({ prompt_tokens: 29, completion_tokens: 60, total_tokens: 89 })
  })

  test('two function calls across events → indexes 0 and 1, thought text as reasoning_content', async () => {
    const { chunks } = await stream('two-tools')
    const out = assemble(chunks)
    expect(out.content).toBe(await recordedText('two-tools'))
    expect(out.content).toBe('Checking the weather in both cities.')
    expect(out.reasoning).toBe('I should call the tool for each city.')
    expect(out.tools.map((t) => [t.name, JSON.parse(t.arguments)])).toEqual([
      ['get_weather', { city: 'Paris', unit: 'c' }],
      ['get_weather', { city: 'London' }],
    ])
    expect(thoughtSignatureOf(out.tools[0]!.id)).toBe('CiQB0e2Kb+/9Xz==')
    expect(out.tools[1]!.id).toMatch(/^call_[0-9a-f]{24}$/)
    expect(out.finish).toBe('tool_calls')
    expect(out.usage).toMatchObject({ prompt_tokens: 41, completion_tokens: 71, total_tokens: 112 })
  })

  test('thought summaries across events → reasoning_content deltas, before the content', async () => {
    const { chunks } = await stream('thinking')
    const out = assemble(chunks)
    expect(out.reasoning).toBe(
      '**Counting the letters**\n\nI spell strawberry out and mark each r. Three of them: st-r-awbe-r-r-y.',
    )
    expect(out.content).toBe("There are **3** r's in strawberry.")
    expect(out.reasoningFirst).toBe(true)
    expect(out.finish).toBe('stop')
  })

  test('MAX_TOKENS → length', async () => {
    const out = assemble((await stream('max-tokens')).chunks)
    expect(out.content).toBe('The history of Rome')
    expect(out.finish).toBe('length')
  })

  test('a blocked prompt streams a role chunk, content_filter and usage', async () => {
    const { chunks } = await stream('prompt-blocked')
    expect(chunks.map((c) => c.choices[0]?.finish_reason ?? null)).toEqual([null, 'content_filter', null])
    expect(assemble(chunks).usage).toMatchObject({ prompt_tokens: 12, total_tokens: 12 })
  })
})
