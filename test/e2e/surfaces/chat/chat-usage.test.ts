/**
 * Usage recording end to end: after non-streamed and streamed requests, `GET /v1/usage` reports
 * requests and prompt / completion tokens for today and per model equal to what the upstream
 * counted. A stream's usage is recorded even when the client did not ask for include_usage (the
 * gateway always asks upstream), and the usage chunk is forwarded only when the client asked.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import {
  type ChatBed,
  readSSE,
  startChatBed,
  UPSTREAM_MODEL,
  userMessage,
  WEATHER_TOOLS,
} from '../../../support/chat-bed.ts'

let bed: ChatBed
let key: string
beforeAll(async () => {
  bed = await startChatBed()
  key = (await bed.gw.key('usage-e2e', 'unlimited')).key
})
afterAll(() => bed.stop())

interface Tokens {
  prompt_tokens: number
  completion_tokens: number
}

/** The usage the mock itself reports for this request: the numbers the gateway must record. */
async function upstreamUsage(body: Record<string, unknown>): Promise<Tokens> {
  const res = await fetch(`${bed.mock.url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, model: UPSTREAM_MODEL, stream: false }),
  })
  const { usage } = (await res.json()) as { usage: Tokens }
  return { prompt_tokens: usage.prompt_tokens, completion_tokens: usage.completion_tokens }
}

const post = (body: Record<string, unknown>) => bed.post(body, { authorization: `Bearer ${key}` })

async function usage() {
  await bed.gw.deps.recorder.flush()
  const res = await fetch(`${bed.gw.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })
  expect(res.status).toBe(200)
  return ((await res.json()) as { usage: any }).usage
}

describe('usage recording', () => {
  test('non-streamed and streamed requests are counted with the upstream token numbers, today and per model', async () => {
    const before = await usage()
    expect(before.today).toMatchObject({ requests: 0, prompt_tokens: 0, completion_tokens: 0 })

    const text = { model: 'mock/gpt-4o-mini', messages: userMessage() }
    const tools = { model: 'mock/gpt-4o-mini', messages: userMessage('Weather?'), tools: WEATHER_TOOLS }
    const cool = { model: 'mock/cool', messages: userMessage() }
    const sent: Array<{ body: Record<string, unknown>; stream: boolean; includeUsage?: boolean }> = [
      { body: text, stream: false },
      { body: tools, stream: false },
      { body: text, stream: true }, // no include_usage: recorded all the same
      { body: tools, stream: true },
      { body: text, stream: true, includeUsage: true },
      { body: cool, stream: false },
      { body: cool, stream: true },
    ]

    const expected: Record<string, { requests: number } & Tokens> = {}
    for (const { body, stream, includeUsage } of sent) {
      const tokens = await upstreamUsage(body)
      const full = {
        ...body,
        stream,
        ...(includeUsage ? { stream_options: { include_usage: true } } : {}),
      }
      bed.mock.reset()
      const res = await post(full)
      expect(res.status).toBe(200)
      if (stream) {
        const s = await readSSE(res)
        expect(s.done).toBe(true)
        // The gateway asked the upstream for usage whatever the client said ...
        expect(bed.mock.stats.lastBody).toMatchObject({ stream_options: { include_usage: true } })
        // ... and forwards the usage chunk only when the client asked for it.
        const usageChunks = s.events.filter((e) => (e.choices as unknown[]).length === 0 || 'usage' in e)
        if (includeUsage) expect(usageChunks.at(-1)!.usage).toMatchObject(tokens)
        else expect(usageChunks).toEqual([])
      } else {
        expect(((await res.json()) as { usage: Tokens }).usage).toMatchObject(tokens)
      }
      const model = String(body.model)
      expected[model] ??= { requests: 0, prompt_tokens: 0, completion_tokens: 0 }
      const m = expected[model]!
      m.requests++
      m.prompt_tokens += tokens.prompt_tokens
      m.completion_tokens += tokens.completion_tokens
    }

    const u = await usage()
    const sum = (k: 'requests' | 'prompt_tokens' | 'completion_tokens') =>
      Object.values(expected).reduce((n, m) => n + m[k], 0)
    expect(u.today).toMatchObject({
      requests: sent.length,
      prompt_tokens: sum('prompt_tokens'),
      completion_tokens: sum('completion_tokens'),
      total_tokens: sum('prompt_tokens') + sum('completion_tokens'),
      errors: 0,
    })
    // Sanity: tool answers cost more completion tokens than text ones, so the sums are not trivial.
    expect(sum('completion_tokens')).toBeGreaterThan(sent.length * 4)
    for (const [model, m] of Object.entries(expected)) {
      expect({ model, ...u.by_model[model] }).toMatchObject({ model, ...m })
    }
    expect(u.current_day.requests).toBe(sent.length)
  })

  test('refused requests are not counted; an upstream failure is counted as an error without tokens', async () => {
    const before = await usage()
    expect((await post({ model: 'mock/bare', messages: userMessage(), stream: true })).status).toBe(400)
    expect((await post({ model: 'mock/nope', messages: userMessage() })).status).toBe(404)
    const after400 = await usage()
    expect(after400.today.requests).toBe(before.today.requests)

    expect((await post({ model: 'mock/fault-500', messages: userMessage() })).status).toBe(502)
    const after = await usage()
    expect(after.today.requests).toBe(before.today.requests + 1)
    expect(after.today.errors).toBe(before.today.errors + 1)
    expect(after.by_model['mock/fault-500']).toMatchObject({ requests: 1, errors: 1, prompt_tokens: 0 })
    expect(after.today.prompt_tokens).toBe(before.today.prompt_tokens)
  })

  test('a stream cut after its first chunks is counted as an error', async () => {
    const before = await usage()
    const s = await readSSE(
      await post({ model: 'mock/fault-cut-stream', messages: userMessage(), stream: true }),
    )
    expect(s.done).toBe(false)
    const after = await usage()
    expect(after.today.requests).toBe(before.today.requests + 1)
    expect(after.by_model['mock/fault-cut-stream']).toMatchObject({ requests: 1, errors: 1 })
  })
})
