/**
 * The same-wire byte relays (src/providers/sse/byte-relay.ts and its two users): the client gets
 * the upstream's bytes with only the model id changed, however the body is cut into chunks; usage,
 * the end and errors are read from the few events that carry them; CR-framed upstreams and
 * oversized events are handled as on the parsed path.
 */
import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import type { ProviderConfig } from '../../../src/config/schema.ts'
import type { StreamEncoder } from '../../../src/pipeline/stream/encoder.ts'
import type { EncodeContext } from '../../../src/pipeline/surface.ts'
import { MessagesRelay } from '../../../src/surfaces/messages/pass-through.ts'
import { ResponsesRelay } from '../../../src/surfaces/responses/relay.ts'
import { GatewayError } from '../../../src/util/errors.ts'

const RECORDED = join(import.meta.dir, '..', '..', 'fixtures', 'reference', 'recorded')
const enc = new TextEncoder()
const dec = new TextDecoder()

async function anthropicStream(crlf = false): Promise<string> {
  const lines = (await Bun.file(join(RECORDED, 'anthropic-text.chunks.txt')).text())
    .split('\n')
    .filter((l) => l.trim())
  const nl = crlf ? '\r\n' : '\n'
  return lines.map((l) => `event: ${JSON.parse(l).type}${nl}data: ${l}${nl}${nl}`).join('')
}

function provider(max?: number): ProviderConfig {
  return {
    prefix: 'anthropic',
    kind: 'anthropic',
    base_url: 'http://127.0.0.1:1',
    api_key: 'k',
    models: [{ name: 'claude-x' }],
    ...(max === undefined ? {} : { max_response_bytes: max }),
  } as ProviderConfig
}

function messagesRelay(max?: number): StreamEncoder<Uint8Array> {
  const ctx = { modelId: 'anthropic/claude-x', provider: provider(max) } as EncodeContext<never>
  return new MessagesRelay(ctx as never)
}

/** Feeds `body` in pieces of `size` bytes; the client's bytes, as text. */
function relay(encoder: StreamEncoder<Uint8Array>, body: string, size: number): string {
  const b = enc.encode(body)
  const out: Uint8Array[] = []
  for (let at = 0; at < b.length; at += size) {
    const piece = encoder.encode(b.slice(at, at + size))
    if (piece) out.push(piece)
  }
  const tail = encoder.end()
  if (tail) out.push(tail)
  return out.map((p) => dec.decode(p)).join('')
}

describe('messages → anthropic byte relay', () => {
  test('every byte but the model id in message_start passes as it came, however the body is cut', async () => {
    const body = await anthropicStream()
    const expected = body.replace('"model":"claude-sonnet-4-5-20250929"', '"model":"anthropic/claude-x"')
    expect(expected).not.toBe(body)
    for (const size of [1, 2, 7, 64, 1000, body.length]) {
      const r = messagesRelay()
      expect(relay(r, body, size)).toBe(expected)
      expect(r.usage()).toMatchObject({
        prompt_tokens: expect.any(Number),
        completion_tokens: expect.any(Number),
      })
      expect(r.usage()!.completion_tokens).toBeGreaterThan(0)
      expect(r.relayedBytes!()).toBeGreaterThan(0)
      expect(r.failure!()).toBeNull()
    }
  })

  test('an upstream framing with CRLF is re-framed with LF and relayed the same way', async () => {
    const lf = relay(messagesRelay(), await anthropicStream(), 1000)
    for (const size of [1, 5, 1000])
      expect(relay(messagesRelay(), await anthropicStream(true), size)).toBe(lf)
  })

  test('a body that ends before message_stop → 502 upstream_stream_interrupted', async () => {
    const body = await anthropicStream()
    const cut = body.slice(0, body.indexOf('event: message_stop'))
    expect(() => relay(messagesRelay(), cut, 100)).toThrow(/message_stop/)
  })

  test('an error event is relayed as it came and recorded as the failure', () => {
    const r = messagesRelay()
    const error =
      'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"busy"}}\n\n'
    expect(relay(r, error, 10)).toBe(error)
    expect(r.failure!()).toBeInstanceOf(GatewayError)
  })

  test('an event larger than max_response_bytes → 502 upstream_response_too_large, complete or not', () => {
    const big = `event: content_block_delta\ndata: {"delta":{"text":"${'x'.repeat(500)}"}}\n\n`
    expect(() => messagesRelay(300).encode(enc.encode(big))).toThrow(/larger than 300 bytes/)
    expect(() => messagesRelay(300).encode(enc.encode(big.slice(0, 400)))).toThrow(/larger than 300 bytes/)
    expect(messagesRelay(1000).encode(enc.encode(big))).not.toBeNull()
  })
})

describe('responses → Responses byte relay', () => {
  const created = (model: string) =>
    `event: response.created\ndata: {"type":"response.created","response":{"id":"r1","object":"response","model":"${model}","output":[]},"sequence_number":0}\n\n`
  const delta =
    'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"Hi \\"model\\":\\"x\\"","sequence_number":1}\n\n'
  const completed = (model: string) =>
    `event: response.completed\ndata: {"type":"response.completed","response":{"id":"r1","object":"response","model":"${model}","output":[],"usage":{"input_tokens":3,"output_tokens":2,"total_tokens":5}},"sequence_number":2}\n\n`

  test('the model of each response object is the gateway id; other events pass untouched; [DONE] and anything after the end dropped', () => {
    const body = `${created('gpt-5')}${delta}${completed('gpt-5')}data: [DONE]\n\n${delta}`
    for (const size of [1, 3, 50, body.length]) {
      const r = new ResponsesRelay('openai/gpt-5', 'openai')
      expect(relay(r, body, size)).toBe(`${created('openai/gpt-5')}${delta}${completed('openai/gpt-5')}`)
      expect(r.usage()).toMatchObject({ prompt_tokens: 3, completion_tokens: 2 })
    }
  })

  test('a stream cut before its terminal event ends with error and response.failed, numbered after the last event', () => {
    const r = new ResponsesRelay('openai/gpt-5', 'openai')
    const out = relay(r, `${created('gpt-5')}${delta}`, 20)
    expect(out).toContain('"model":"openai/gpt-5"')
    const tail = out.slice(out.indexOf(delta) + delta.length)
    expect(tail).toContain('event: error\n')
    expect(tail).toContain('"sequence_number":2')
    expect(tail).toContain('event: response.failed\n')
    expect(tail).toContain('"sequence_number":3')
    expect(r.failure!()?.code).toBe('upstream_stream_interrupted')
    // The same from an upstream that writes JSON with spaces.
    const spaced = new ResponsesRelay('openai/gpt-5', 'openai')
    const last =
      'event: response.output_text.delta\ndata: {"type": "response.output_text.delta", "delta": "Hi", "sequence_number": 7}\n\n'
    const cut = relay(spaced, `${created('gpt-5')}${last}`, 20)
    expect(cut.slice(cut.indexOf(last) + last.length)).toContain('"sequence_number":9')
    expect(spaced.relayedBytes()).toBe(2)
  })
})
