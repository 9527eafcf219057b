/**
 * A translated Responses stream that fails after its first byte ends with `error`, then
 * `response.failed`. The gateway wrote the `error` event as the published spec has it
 * (`{"type":"error","code","message","param","sequence_number"}`); OpenAI's live API nests the
 * fields (`{"type":"error","error":{"type","code","message","param"},"sequence_number"}`, the
 * recorded `openai-responses-error.chunks.txt`), and that is what the OpenAI SDKs read: v6 throws
 * only for an event with `error`, so the stream ended as if nothing had failed; v7 threw with the
 * event's own `type` ("error") as the error's type. The recorded Anthropic stream that fails
 * mid-answer (overloaded), replayed by the local fake.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import OpenAI from 'openai'
import { type ResponsesBed, startResponsesBed } from '../../../support/responses-bed.ts'
import { relaxed, validateEvent } from '../../../support/responses-schemas.ts'

const CLIENTS = join(import.meta.dir, '../../../clients')
let bed: ResponsesBed
let OpenAIv6: typeof OpenAI | null = null
beforeAll(async () => {
  bed = await startResponsesBed()
  try {
    OpenAIv6 = (await import(Bun.resolveSync('openai', CLIENTS))).default
  } catch {
    console.log('SKIPPED (openai v6 part): test/clients not installed (npm install --prefix test/clients)')
  }
})
afterAll(() => bed.stop())

const REQUEST = { model: 'anthropic/stream-error', input: 'Tell me a story', stream: true } as const

/** The SDK's reading of the stream: the event types it yielded, and what it threw. */
async function consume(client: OpenAI): Promise<{ types: string[]; thrown: any }> {
  const types: string[] = []
  try {
    const stream = await client.responses.create(REQUEST)
    for await (const event of stream) types.push(event.type)
    return { types, thrown: null }
  } catch (e) {
    return { types, thrown: e }
  }
}

describe('a translated Responses stream that fails after content', () => {
  test('the error event nests type, code, message and param under error, as the live API does', async () => {
    const res = await bed.post(REQUEST)
    expect(res.status).toBe(200)
    const events = (await res.text())
      .split('\n\n')
      .filter((frame) => frame.includes('data: '))
      .map((frame) => JSON.parse(frame.slice(frame.indexOf('data: ') + 6)))
    const i = events.findIndex((e) => e.type === 'error')
    expect(i).toBeGreaterThan(0)
    const error = events[i]
    expect(Object.keys(error).sort()).toEqual(['error', 'sequence_number', 'type'])
    expect(Object.keys(error.error).sort()).toEqual(['code', 'message', 'param', 'type'])
    expect(error.error.message).toContain('Overloaded')
    expect(error.sequence_number).toBe(events[i - 1].sequence_number + 1)
    // The spec's shape once the documented deviation is undone, like every recorded live event.
    expect(validateEvent(relaxed(error))).toBeNull()
    expect(events[i + 1].type).toBe('response.failed')
  })

  test('the OpenAI SDK throws an APIError carrying the gateway error’s type and code', async () => {
    const { types, thrown } = await consume(bed.client())
    expect(types).toContain('response.output_text.delta')
    expect(thrown).toBeInstanceOf(OpenAI.APIError)
    expect(thrown.message).toContain('Overloaded')
    expect(thrown.type).not.toBe('error')
    expect(thrown.code).toBeString()
  })

  test('the OpenAI SDK v6 (test/clients) throws too, where it read the spec shape as one more event', async () => {
    if (!OpenAIv6) return
    const client = new OpenAIv6({ baseURL: `${bed.gw.url}/v1`, apiKey: bed.key, maxRetries: 0 })
    const { types, thrown } = await consume(client as unknown as OpenAI)
    expect(types).not.toContain('response.failed')
    expect(thrown?.constructor?.name).toBe('APIError')
    expect(thrown.message).toContain('Overloaded')
  })
})
