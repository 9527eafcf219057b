/** The mock upstream itself (scripts/mock-upstream.ts): its wire format is what the other tests trust. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type MockUpstream, startMockUpstream } from '../../scripts/mock-upstream.ts'
import { parseSSE } from '../../src/providers/sse/index.ts'
import { validateChunk, validateError, validateResponse } from '../support/openai-schemas.ts'
import { drain } from './helpers.ts'

let mock: MockUpstream
beforeAll(async () => {
  mock = await startMockUpstream({ chunks: 3 })
})
afterAll(() => mock.stop())

const post = (body: unknown) =>
  fetch(`${mock.url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-mock' },
    body: JSON.stringify(body),
  })

async function events(body: unknown): Promise<string[]> {
  const res = await post(body)
  expect(res.headers.get('content-type')).toStartWith('text/event-stream')
  return (await drain(parseSSE(res.body!))).items.map((e) => e.data)
}

describe('mock upstream', () => {
  test('a JSON completion that matches OpenAI schema; stats record the request', async () => {
    mock.reset()
    const res = await post({ model: 'gpt-x', messages: [{ role: 'user', content: 'hi' }] })
    const json = (await res.json()) as any
    expect(validateResponse(json)).toBeNull()
    expect(json.model).toBe('gpt-x')
    expect(json.choices[0].message.content).toBe('Hello from the')
    expect(mock.stats).toMatchObject({ requests: 1, streams: 0, aborted: 0, lastBody: { model: 'gpt-x' } })
    expect(mock.stats.lastHeaders.authorization).toBe('Bearer sk-mock')
  })

  test('SSE exactly as OpenAI frames it: role, deltas, finish, usage only when asked, [DONE]', async () => {
    const plain = await events({ model: 'm', messages: [], stream: true })
    expect(plain.at(-1)).toBe('[DONE]')
    const chunks = plain.slice(0, -1).map((d) => JSON.parse(d))
    for (const c of chunks) expect(validateChunk(c)).toBeNull()
    expect(chunks.map((c) => c.choices[0].delta)).toEqual([
      { role: 'assistant', content: '', refusal: null },
      { content: 'Hello' },
      { content: ' from' },
      { content: ' the' },
      {},
    ])
    expect(chunks.every((c) => !('usage' in c))).toBe(true)

    const withUsage = (
      await events({ model: 'm', messages: [], stream: true, stream_options: { include_usage: true } })
    )
      .slice(0, -1)
      .map((d) => JSON.parse(d))
    expect(withUsage.at(-1).choices).toEqual([])
    expect(withUsage.at(-1).usage.total_tokens).toBe(15)
    expect(withUsage.slice(0, -1).every((c) => c.usage === null)).toBe(true)
  })

  test('fault models answer with OpenAI error bodies', async () => {
    for (const [model, status] of [
      ['fault-500', 500],
      ['fault-429', 429],
      ['fault-400', 400],
    ] as const) {
      const res = await post({ model, messages: [] })
      expect(res.status).toBe(status)
      expect(validateError(await res.json())).toBeNull()
    }
    expect((await post({ model: 'fault-429', messages: [] })).headers.get('retry-after')).toBe('7')
    expect(await (await post({ model: 'fault-400', messages: [] })).text()).toContain('sk-mock')
  })

  test('slow-first sends the headers at once and the first event later', async () => {
    const t0 = performance.now()
    const res = await post({ model: 'slow-first-300ms', messages: [], stream: true })
    expect(performance.now() - t0).toBeLessThan(200)
    const { items } = await drain(parseSSE(res.body!))
    expect(performance.now() - t0).toBeGreaterThanOrEqual(290)
    expect(items.at(-1)!.data).toBe('[DONE]')
  })

  test('GET /v1/models lists models; unknown paths are OpenAI-style 404s', async () => {
    const models = (await (await fetch(`${mock.url}/models`)).json()) as any
    expect(models.object).toBe('list')
    expect(models.data.length).toBeGreaterThan(0)
    const missing = await fetch(`${mock.url}/nope`)
    expect(missing.status).toBe(404)
    expect(validateError(await missing.json())).toBeNull()
  })

  test('runs as a CLI and prints its URL', async () => {
    const proc = Bun.spawn([process.execPath, 'scripts/mock-upstream.ts', '--port', '0', '--chunks', '2'], {
      cwd: new URL('../..', import.meta.url).pathname,
      stdout: 'pipe',
    })
    try {
      const reader = proc.stdout.getReader()
      const line = new TextDecoder().decode((await reader.read()).value).trim()
      expect(line).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/)
      const res = await fetch(`${line}/chat/completions`, {
        method: 'POST',
        body: '{"model":"m","messages":[]}',
      })
      const json = (await res.json()) as any
      expect(json.choices[0].message.content).toBe('Hello from')
    } finally {
      proc.kill()
      await proc.exited
    }
  })
})
