/**
 * Which events of the Responses pass-through carry content (the writer holds the status and the
 * events until the first one, DESIGN §10), on the recordings and on the event types they lack, and
 * what an upstream failure before content becomes: the attempt's error, classified by its code.
 */
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { factsOf } from '../../../src/providers/failure-facts.ts'
import { classify } from '../../../src/providers/resilience/index.ts'
import { ResponsesRelay } from '../../../src/surfaces/responses/relay.ts'

const RECORDED = new URL('../../fixtures/reference/recorded/', import.meta.url)
/** A recording's events as OpenAI frames them (`event: <type>`), `lines` 1-based and inclusive. */
const frames = (name: string, lines?: [number, number]): string[] => {
  let all = readFileSync(new URL(name, RECORDED), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
  if (lines) all = all.slice(lines[0] - 1, lines[1])
  return all.map((l) => `event: ${JSON.parse(l).type}\ndata: ${l}\n\n`)
}
const ev = (data: Record<string, unknown>) => `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`
const typeOf = (frame: string) => frame.slice(7, frame.indexOf('\n'))

/** Feeds `events` one by one; the type of the one after which content had started, or null. */
function firstContent(relay: ResponsesRelay, events: string[]): string | null {
  for (const frame of events) {
    relay.encode(Buffer.from(frame))
    if (relay.contentStarted()) return typeOf(frame)
  }
  return null
}

describe('content starts at the first event that carries some of the answer', () => {
  test.each([
    { name: 'openai-responses-text.chunks.txt', first: 'response.output_text.delta' },
    { name: 'openai-responses-tool.chunks.txt', first: 'response.function_call_arguments.delta' },
    {
      name: 'openai-responses-reasoning.chunks.txt',
      lines: [1, 56] as [number, number],
      first: 'response.reasoning_summary_text.delta',
    },
  ])('$name: content from its first $first; nothing before it is', ({ name, lines, first: expected }) => {
    const events = frames(name, lines)
    const relay = new ResponsesRelay('oa/m', 'oa')
    expect(firstContent(relay, events)).toBe(expected)
    const before = events
      .slice(
        0,
        events.findIndex((f) => typeOf(f) === expected),
      )
      .map(typeOf)
    expect(before).toContain('response.created')
    expect(before).toContain('response.output_item.added')
    expect(relay.failure()).toBeNull()
  })

  test("openings, a hosted tool's progress, an empty delta and comments are not content", () => {
    const relay = new ResponsesRelay('oa/m', 'oa')
    const opening = [
      'response.queued',
      'response.web_search_call.in_progress',
      'response.web_search_call.searching',
      'response.image_generation_call.generating',
      'response.code_interpreter_call.interpreting',
      'response.reasoning_summary_part.added',
      'response.content_part.added',
    ].map((type, i) => ev({ type, item_id: 'x', output_index: 0, sequence_number: i }))
    opening.push(': keep-alive\n\n')
    opening.push(ev({ type: 'response.output_text.delta', item_id: 'x', delta: '', sequence_number: 9 }))
    expect(firstContent(relay, opening)).toBeNull()
  })

  test('a finished output item is content (a reasoning item whose text is hidden, a hosted tool result)', () => {
    const relay = new ResponsesRelay('oa/m', 'oa')
    const done = ev({
      type: 'response.output_item.done',
      output_index: 0,
      item: { id: 'rs_1', type: 'reasoning', summary: [], encrypted_content: 'gAAA' },
      sequence_number: 3,
    })
    expect(firstContent(relay, [done])).toBe('response.output_item.done')
  })

  test('a completed answer with no output is content: the hold ends with it', () => {
    const relay = new ResponsesRelay('oa/m', 'oa')
    const completed = ev({
      type: 'response.completed',
      response: { id: 'r', object: 'response', model: 'm', output: [], usage: null },
      sequence_number: 2,
    })
    expect(firstContent(relay, [completed])).toBe('response.completed')
    expect(relay.failure()).toBeNull()
  })
})

describe('an upstream failure before content is the attempt’s, classified by its code', () => {
  test('the recorded out-of-quota stream: 502 upstream_billing_error in its words, a credential failure, nothing relayed from the error on', () => {
    const relay = new ResponsesRelay('oa/m', 'oa')
    const events = frames('openai-responses-error.chunks.txt')
    expect(firstContent(relay, events)).toBeNull()
    const failure = relay.failure()!
    expect(failure).toMatchObject({ status: 502, code: 'upstream_billing_error' })
    expect(failure.message).toContain('You exceeded your current quota')
    expect(factsOf(failure)).toMatchObject({ code: 'insufficient_quota' })
    expect(classify(factsOf(failure)!)).toBe('credential')
    // The error event and what follows it are withheld; the writer ends the attempt there.
    const again = new ResponsesRelay('oa/m', 'oa')
    again.encode(Buffer.from(events.slice(0, 2).join('')))
    expect(again.encode(Buffer.from(events.slice(2).join('')))).toBeNull()
  })

  test('an error event with its fields beside its type (the API reference shape)', () => {
    const relay = new ResponsesRelay('oa/m', 'oa')
    relay.encode(
      Buffer.from(
        ev({
          type: 'error',
          code: 'rate_limit_exceeded',
          message: 'Slow down',
          param: null,
          sequence_number: 1,
        }),
      ),
    )
    expect(relay.failure()?.message).toContain('Slow down')
    expect(classify(factsOf(relay.failure())!)).toBe('rate_limited')
  })

  test('response.failed alone: its error code decides', () => {
    const relay = new ResponsesRelay('oa/m', 'oa')
    relay.encode(
      Buffer.from(
        ev({
          type: 'response.failed',
          response: {
            id: 'r',
            object: 'response',
            model: 'm',
            error: { code: 'server_error', message: 'Oops' },
          },
          sequence_number: 2,
        }),
      ),
    )
    expect(relay.contentStarted()).toBe(false)
    expect(relay.failure()?.message).toContain('Oops')
    expect(classify(factsOf(relay.failure())!)).toBe('transient')
  })

  test('after content, the error event goes out as it came and the stream has failed at it (issue 44: not at response.failed)', () => {
    const relay = new ResponsesRelay('oa/m', 'oa')
    const text = frames('openai-responses-text.chunks.txt')
    const [, , error, failed] = frames('openai-responses-error.chunks.txt')
    relay.encode(Buffer.from(text.slice(0, 5).join('')))
    expect(typeOf(text[4]!)).toBe('response.output_text.delta')
    expect(relay.contentStarted()).toBe(true)
    expect(Buffer.from(relay.encode(Buffer.from(error!))!).toString()).toBe(error!)
    // The recording's failure is insufficient_quota: named as its 429 would be, from the error event
    // on (a client that stops reading there leaves a failed attempt, not a 499).
    expect(relay.failure()?.code).toBe('upstream_billing_error')
    relay.encode(Buffer.from(failed!))
    expect(relay.failure()?.code).toBe('upstream_billing_error')
  })
})

describe("the relay's own ending after content", () => {
  test('a cut after content: error (fields nested under error, as the live API sends it), then response.failed, numbering continued', () => {
    const relay = new ResponsesRelay('oa/m', 'oa')
    const events = frames('openai-responses-text.chunks.txt').slice(0, -1)
    for (const frame of events) relay.encode(Buffer.from(frame))
    const lastSeq = JSON.parse(events.at(-1)!.split('data: ')[1]!).sequence_number
    const tail = new TextDecoder()
      .decode(relay.end()!)
      .split('\n\n')
      .filter((f) => f.includes('data: '))
      .map((f) => JSON.parse(f.slice(f.indexOf('data: ') + 6)))
    expect(tail.map((e) => e.type)).toEqual(['error', 'response.failed'])
    expect(tail[0]).toEqual({
      type: 'error',
      error: {
        type: 'upstream_error',
        code: 'upstream_stream_interrupted',
        message: expect.stringContaining('response.completed'),
        param: null,
      },
      sequence_number: lastSeq + 1,
    })
  })
})
