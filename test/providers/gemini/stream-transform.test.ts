import { describe, expect, test } from 'bun:test'
import { geminiStreamTransform } from '../../../src/providers/gemini/gemini-stream-transform.ts'
import type { SSEEvent } from '../../../src/providers/sse/index.ts'
import { validateChunk } from '../../support/openai-schemas.ts'
import { drain, geminiProvider } from './helpers.ts'

async function run(events: Array<object | string>) {
  const source = new ReadableStream<SSEEvent>({
    start(controller) {
      for (const e of events) controller.enqueue({ data: typeof e === 'string' ? e : JSON.stringify(e) })
      controller.close()
    },
  })
  const out = await drain(
    source.pipeThrough(geminiStreamTransform({ model: 'gemini-x', provider: geminiProvider('http://x') })),
  )
  for (const chunk of out.chunks) expect(validateChunk(chunk)).toBeNull()
  return out
}

const text = (index: number, t: string, finishReason?: string) => ({
  index,
  content: { role: 'model', parts: [{ text: t }] },
  ...(finishReason ? { finishReason } : {}),
})

describe('geminiStreamTransform', () => {
  test('several candidates (n > 1) → one choice each, role first, finish per choice, one usage chunk', async () => {
    const { chunks, error } = await run([
      { candidates: [text(0, 'A'), text(1, 'B')], responseId: 'r1' },
      {
        candidates: [text(0, 'a', 'STOP'), text(1, 'b', 'MAX_TOKENS')],
        responseId: 'r1',
        usageMetadata: { promptTokenCount: 2, candidatesTokenCount: 4, totalTokenCount: 6 },
      },
    ])
    expect(error).toBeUndefined()
    const byChoice = (i: number) => chunks.filter((c) => c.choices[0]?.index === i).map((c) => c.choices[0]!)
    expect(byChoice(0).map((c) => [c.delta, c.finish_reason])).toEqual([
      [{ role: 'assistant', content: '' }, null],
      [{ content: 'A' }, null],
      [{ content: 'a' }, null],
      [{}, 'stop'],
    ])
    expect(byChoice(1).at(-1)!.finish_reason).toBe('length')
    expect(chunks.at(-1)).toMatchObject({
      id: 'chatcmpl-r1',
      choices: [],
      usage: { prompt_tokens: 2, completion_tokens: 4, total_tokens: 6 },
    })
  })

  test('an empty body → 502 upstream_stream_interrupted', async () => {
    expect((await run([])).error).toMatchObject({ status: 502, code: 'upstream_stream_interrupted' })
  })

  test('an event that is not a JSON object → 502 upstream_invalid_response', async () => {
    expect((await run(['[1,2]'])).error).toMatchObject({ status: 502, code: 'upstream_invalid_response' })
  })

  test('an event that is not JSON is skipped and counted (DESIGN §10); a stream of nothing else → 502 upstream_invalid_response', async () => {
    expect((await run(['not json'])).error).toMatchObject({ status: 502, code: 'upstream_invalid_response' })
    const { chunks, error } = await run([
      { candidates: [text(0, 'A')], responseId: 'r1' },
      'not json',
      { candidates: [text(0, 'B', 'STOP')], responseId: 'r1' },
    ])
    expect(error).toBeUndefined()
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('AB')
  })

  test('an error object as the first event → the mapped error, no chunk', async () => {
    const { chunks, error } = await run([
      { error: { code: 429, message: 'quota', status: 'RESOURCE_EXHAUSTED' } },
    ])
    expect(chunks).toEqual([])
    expect(error).toMatchObject({ status: 429, code: 'upstream_rate_limited' })
  })
})
