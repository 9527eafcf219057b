/**
 * The chat → openai byte relay (`ChatBytes`): its byte path must write exactly what the text relay
 * (`ChatRelay`, the rules) writes, for any chunking of the upstream body; the events it does not
 * take go to the text relay; a failure in the first event throws (an HTTP error), a later one is
 * relayed in-band.
 */
import { describe, expect, test } from 'bun:test'
import { buildStreamFrames } from '../../../scripts/mock-upstream/wire.ts'
import { ChatBytes } from '../../../src/surfaces/chat/relay-bytes.ts'
import { ChatRelay } from '../../../src/surfaces/chat/relay-stream.ts'
import { GatewayError } from '../../../src/util/errors.ts'

const enc = new TextEncoder()
const dec = new TextDecoder()
const MODEL = 'mock/bench'

/** Runs `body` through a ChatBytes cut into pieces of `size` bytes; the client's text and the relay. */
function viaBytes(body: Uint8Array, includeUsage: boolean, size = body.length) {
  const relay = new ChatBytes(MODEL, includeUsage, 1 << 20, 'mock')
  let out = ''
  for (let i = 0; i < body.length; i += size) {
    const piece = relay.stage.encode(body.subarray(i, i + size))
    if (piece !== null) out += dec.decode(piece)
  }
  const end = relay.end()
  if (end !== null) out += dec.decode(end)
  return { out, relay }
}

/** The text relay on the same events (its `encode` + `end`). */
function viaText(events: string[], includeUsage: boolean): string {
  const relay = new ChatRelay(MODEL, includeUsage, 'mock')
  let out = ''
  for (const data of events) {
    const b = relay.encode({ data })
    if (b !== null) out += dec.decode(b)
  }
  const end = relay.end()
  return end === null ? out : out + dec.decode(end)
}

const sse = (events: string[]) => enc.encode(events.map((d) => `data: ${d}\n\n`).join(''))

describe('ChatBytes', () => {
  const frames = buildStreamFrames({ model: 'gpt-x', created: 1, words: 6, usage: true, tools: [] })
  const body = Buffer.concat(frames)
  const events = dec
    .decode(body)
    .split('\n\n')
    .filter((e) => e.startsWith('data: '))
    .map((e) => e.slice(6))
    .filter((d) => d !== '[DONE]')

  for (const includeUsage of [false, true]) {
    test(`the mock's stream, include_usage ${includeUsage}: the text relay's bytes, at any chunking`, () => {
      const expected = viaText(events, includeUsage)
      expect(expected).toContain(`"model":"${MODEL}"`)
      for (const size of [1, 2, 7, 64, body.length]) {
        const { out, relay } = viaBytes(body, includeUsage, size)
        expect(out).toBe(expected)
        expect(relay.usage()?.completion_tokens).toBeGreaterThan(0)
        expect(relay.relayedBytes()).toBeGreaterThan(0)
        expect(relay.failure()).toBeNull()
      }
    })
  }

  test('shapes off the byte path (reordered, pretty, escaped model, no usage key) match the text relay', () => {
    const odd = [
      '{"choices":[{"index":0,"delta":{"content":"a"}}],"model":"gpt-x"}',
      '{"id":"x","model":"gpt\\u002dx","choices":[{"index":0,"delta":{"content":"b"}}],"usage":null}',
      '{"id":"x","model":"gpt-x","choices":[{"index":0,"delta":{"content":"c"},"finish_reason":"stop"}]}',
      '{"id":"x","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3},"model":"gpt-x"}',
    ]
    for (const includeUsage of [false, true]) {
      const { out, relay } = viaBytes(sse([...odd, '[DONE]']), includeUsage, 5)
      expect(out).toBe(viaText(odd, includeUsage))
      expect(relay.usage()?.completion_tokens).toBe(2)
    }
    const pretty =
      'data: {\ndata:   "model": "gpt-x",\ndata:   "choices": [{"index":0,"delta":{"content":"d"}}]\ndata: }\n\n'
    const { out } = viaBytes(enc.encode(`${pretty}data: [DONE]\n\n`), false)
    expect(out).toBe(
      viaText(
        ['{\n  "model": "gpt-x",\n  "choices": [{"index":0,"delta":{"content":"d"}}]\n}', '[DONE]'],
        false,
      ),
    )
  })

  test('a failed first event throws (the writer still holds the status); a later one is relayed in-band', () => {
    const error = '{"error":{"message":"overloaded","type":"server_error"}}'
    const first = new ChatBytes(MODEL, false, 1 << 20, 'mock')
    expect(() => first.stage.encode(sse([error]))).toThrow(GatewayError)

    const later = new ChatBytes(MODEL, false, 1 << 20, 'mock')
    const ok = '{"id":"x","model":"gpt-x","choices":[{"index":0,"delta":{"content":"hi"}}],"usage":null}'
    const out = dec.decode(later.stage.encode(sse([ok, error, ok]))!)
    expect(out.split('\n\n').filter(Boolean)).toHaveLength(2)
    expect(out).toContain(`"model":"${MODEL}"`)
    expect(out).toContain('upstream_error')
    expect(later.failure()?.code).toBe('upstream_error')
    expect(later.end()).toBeNull()
  })

  test('a body that ends before [DONE] without a finish_reason is interrupted; with one it is complete', () => {
    const ok =
      '{"id":"x","model":"gpt-x","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}],"usage":null}'
    const cut = new ChatBytes(MODEL, false, 1 << 20, 'mock')
    cut.stage.encode(sse([ok]))
    expect(() => cut.end()).toThrow(/ended before data: \[DONE\]/)
    const done = new ChatBytes(MODEL, false, 1 << 20, 'mock')
    done.stage.encode(sse([ok.replace('"finish_reason":null', '"finish_reason":"stop"')]))
    expect(dec.decode(done.end()!)).toBe('data: [DONE]\n\n')
  })

  describe('a stream without [DONE] whose finish_reason is spaced JSON is complete, at every chunking', () => {
    const head =
      '{"id":"x","model":"gpt-x","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}],"usage":null}'
    const streams: Record<string, string[]> = {
      'spaced throughout (the text path)': [
        '{"id": "x", "model": "gpt-x", "choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": null}]}',
        '{"id": "x", "model": "gpt-x", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}',
      ],
      'compact but for the finish_reason (the byte path)': [
        head,
        '{"id":"x","model":"gpt-x","choices":[{"index":0,"delta":{},"finish_reason": "stop"}],"usage":null}',
      ],
      'a space before the colon too': [
        head,
        '{"id":"x","model":"gpt-x","choices":[{"index":0,"delta":{},"finish_reason" :\t"length"}],"usage":null}',
      ],
    }
    for (const [name, events] of Object.entries(streams)) {
      test(name, () => {
        const body = sse(events)
        for (const includeUsage of [false, true]) {
          const expected = viaText(events, includeUsage)
          expect(expected.endsWith('data: [DONE]\n\n')).toBe(true)
          for (let size = 1; size <= body.length; size++) {
            const { out, relay } = viaBytes(body, includeUsage, size)
            expect(out).toBe(expected)
            expect(relay.failure()).toBeNull()
          }
        }
      })
    }

    test('a spaced null finish_reason is not an end: still interrupted at every chunking', () => {
      const events = [
        head,
        '{"id": "x", "model": "gpt-x", "choices": [{"index": 0, "delta": {"content": "!"}, "finish_reason": null}]}',
        '{"id":"x","model":"gpt-x","choices":[{"index":0,"delta":{"content":"?"},"finish_reason" : null}],"usage":null}',
        '{"id":"x","model":"gpt-x","choices":[{"index":0,"delta":{"content":"."},"finish_reason": null}],"usage":null}',
      ]
      expect(() => viaText(events, false)).toThrow(/ended before data: \[DONE\]/)
      const body = sse(events)
      for (let size = 1; size <= body.length; size++) {
        expect(() => viaBytes(body, false, size)).toThrow(/ended before data: \[DONE\]/)
      }
    })
  })

  test('the text count of events edited a read at a time: every text field, escapes as written, a key in a string not one', () => {
    const events = [
      '{"id":"x","model":"gpt-x","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"finish_reason":null}],"usage":null}',
      '{"id":"x","model":"gpt-x","choices":[{"index":0,"delta":{"reasoning_content":"th\\"nk"},"finish_reason":null}],"usage":null}',
      '{"id":"x","model":"gpt-x","choices":[{"index":0,"delta":{"content":"say \\"finish_reason\\": \\"stop\\""},"finish_reason":null}],"usage":null}',
      '{"id":"x","model":"gpt-x","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":"{\\"a\\":1}"}}]},"finish_reason":null}],"usage":null}',
      '{"id":"x","model":"gpt-x","choices":[{"index":0,"delta":{"reasoning":"r","refusal":"no"},"finish_reason":null}],"usage":null}',
    ]
    // As written: th\"nk 6, say \"finish_reason\": \"stop\" 31, f 1, {\"a\":1} 9, r 1, no 2.
    const written = 6 + 31 + 1 + 9 + 1 + 2
    const body = sse(events)
    for (const size of [body.length, 1, 3, 50]) {
      const relay = new ChatBytes(MODEL, false, 1 << 20, 'mock')
      for (let i = 0; i < body.length; i += size) relay.stage.encode(body.subarray(i, i + size))
      expect(relay.relayedBytes()).toBe(written)
      // The escaped "finish_reason" inside the content is text, not an end.
      expect(() => relay.end()).toThrow(/ended before data: \[DONE\]/)
    }
  })

  test('an event past max_response_bytes is refused without buffering it whole', () => {
    const relay = new ChatBytes(MODEL, false, 1000, 'mock')
    relay.stage.encode(enc.encode('data: {"model":"'))
    expect(() => {
      for (let i = 0; i < 10; i++) relay.stage.encode(enc.encode('x'.repeat(200)))
    }).toThrow(/too large|max_response_bytes|larger/)
  })
})
