/**
 * A prompt Gemini blocks (`promptFeedback.blockReason`, no candidate) on the chat and Responses
 * surfaces, streamed or not, as OpenAI reports a content-filtered answer. The bug: the chat answer
 * had `content: ''` (streamed, the role chunk's `content: ''`, which the OpenAI SDK assembles into
 * the same) — an empty text the model never wrote, where OpenAI gives a message without text
 * `content: null` (a refusal, tool calls only); `finish_reason` says why. Responses (already so):
 * `status: incomplete`, `incomplete_details.reason: content_filter`, no output, ended by
 * `response.incomplete` (never `response.completed`: a blocked answer is not a complete one).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import OpenAI from 'openai'
import { startFakeGemini } from '../../support/fake-gemini.ts'
import { PLANS, startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'
import { validateChunk, validateResponse } from '../../support/openai-schemas.ts'
import { readResponsesStream } from '../../support/responses-bed.ts'
import { validateResponseObject } from '../../support/responses-schemas.ts'

const CLIENTS = join(import.meta.dir, '../../clients')
const MODEL = 'gm/prompt-blocked'
let gw: TestGateway
let key: string
let gemini: Awaited<ReturnType<typeof startFakeGemini>>
let client: OpenAI

beforeAll(async () => {
  gemini = await startFakeGemini({ apiKey: 'gemini-key' })
  gw = await startGateway({
    doc: testConfigDoc({
      providers: [
        {
          prefix: 'gm',
          kind: 'gemini',
          base_url: gemini.url,
          api_key: 'gemini-key',
          models: [
            {
              name: 'prompt-blocked',
              context_window: 8192,
              max_output_tokens: 1024,
              features: ['streaming'],
            },
          ],
        },
      ],
      plans: { ...PLANS, all: { rpm: null, rpd: null, models: ['*'] } },
    }),
  })
  key = (await gw.key('blocked', 'all')).key
  client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 })
})
afterAll(async () => {
  await gw.stop()
  await gemini.stop()
})

const messages = [{ role: 'user' as const, content: 'Something Gemini blocks' }]

describe('chat', () => {
  test('not streamed: finish_reason content_filter, content null (no text)', async () => {
    const res = await client.chat.completions.create({ model: MODEL, messages })
    expect(validateResponse(res)).toBeNull()
    expect(res.choices).toHaveLength(1)
    expect(res.choices[0]!.finish_reason).toBe('content_filter')
    expect(res.choices[0]!.message).toEqual({ role: 'assistant', content: null, refusal: null })
    expect(res.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 0, total_tokens: 12 })
  })

  test('streamed: the role chunk has content null, and the OpenAI SDK assembles the same message', async () => {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages, stream: true }),
    })
    const chunks = (await res.text())
      .split('\n\n')
      .filter((frame) => frame.startsWith('data: {'))
      .map((frame) => JSON.parse(frame.slice(6)))
    for (const chunk of chunks) expect(validateChunk(chunk)).toBeNull()
    expect(chunks.map((c) => c.choices[0]?.delta ?? null)).toEqual([{ role: 'assistant', content: null }, {}])
    expect(chunks[1].choices[0].finish_reason).toBe('content_filter')
    const final = await client.chat.completions.stream({ model: MODEL, messages }).finalChatCompletion()
    expect(final.choices[0]!.finish_reason).toBe('content_filter')
    expect(final.choices[0]!.message.content).toBeNull()
  })
})

describe('responses', () => {
  test('not streamed: incomplete, for content_filter, with no output', async () => {
    const res = await client.responses.create({ model: MODEL, input: 'Something Gemini blocks' })
    expect(validateResponseObject(res)).toBeNull()
    expect(res.status).toBe('incomplete')
    expect(res.incomplete_details).toEqual({ reason: 'content_filter' })
    expect(res.output).toEqual([])
    expect(res.output_text).toBe('')
    expect(res.usage).toMatchObject({ input_tokens: 12, output_tokens: 0, total_tokens: 12 })
  })

  test('streamed: the same response, ended by response.incomplete', async () => {
    const res = await fetch(`${gw.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, input: 'Something Gemini blocks', stream: true }),
    })
    const events = await readResponsesStream(res)
    expect(events.map((e) => e.event)).toEqual([
      'response.created',
      'response.in_progress',
      'response.incomplete',
    ])
    const last = events.at(-1)!.data.response
    expect(last.status).toBe('incomplete')
    expect(last.incomplete_details).toEqual({ reason: 'content_filter' })
    expect(last.output).toEqual([])
  })
})

test('the AI SDK: finish reason content-filter on both surfaces, streamed or not', async () => {
  let ai: any
  let provider: any
  try {
    ai = await import(Bun.resolveSync('ai', CLIENTS))
    provider = await import(Bun.resolveSync('@ai-sdk/openai', CLIENTS))
  } catch {
    console.log('SKIPPED (AI SDK part): test/clients not installed (npm install --prefix test/clients)')
    return
  }
  const openai = provider.createOpenAI({ baseURL: `${gw.url}/v1`, apiKey: key })
  for (const model of [openai.chat(MODEL), openai.responses(MODEL)]) {
    const plain = await ai.generateText({ model, prompt: 'Something Gemini blocks', maxRetries: 0 })
    expect(plain.finishReason).toBe('content-filter')
    expect(plain.text).toBe('')
    const streamed = ai.streamText({ model, prompt: 'Something Gemini blocks', maxRetries: 0 })
    expect(await streamed.finishReason).toBe('content-filter')
    expect(await streamed.text).toBe('')
  }
})
