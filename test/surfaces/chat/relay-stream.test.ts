/**
 * The chat → openai pass-through pieces on their own: the request edits (`forwardBody`,
 * `editTopLevel`), the chunk scan and the stream relay — whose output must equal the decode →
 * `ChatChunkEncoder` route's on everything that route produced, so the two are interchangeable.
 */
import { describe, expect, test } from 'bun:test'
import { buildStreamFrames } from '../../../scripts/mock-upstream/wire.ts'
import type { ModelConfig } from '../../../src/config/schema.ts'
import { editTopLevel, topLevelFields } from '../../../src/json/fields.ts'
import { parseJsonObject } from '../../../src/json/parse-json-body.ts'
import { forwardBody } from '../../../src/surfaces/chat/forward-request.ts'
import { ChatRelay } from '../../../src/surfaces/chat/relay-stream.ts'
import { ChunkScan } from '../../../src/surfaces/chat/scan-chunk.ts'
import { ChatChunkEncoder } from '../../../src/surfaces/chat/stream-encoder.ts'
import { CHAT_EXAMPLE, validateChatRequest } from '../../../src/surfaces/chat/validate.ts'
import { GatewayError } from '../../../src/util/errors.ts'

/** The chat surface's parse: the JSON object, its messages quoting the chat example. */
const parseChatBody = (text: string) => parseJsonObject(text, CHAT_EXAMPLE)

const dec = new TextDecoder()
const text = (b: Uint8Array | null) => (b === null ? null : dec.decode(b))

describe('editTopLevel', () => {
  const edits = new Map<string, string | null>([
    ['model', '"up"'],
    ['a', null],
  ])
  test.each([
    ['{"a":null,"model":"x","b":1}', '{"model":"up","b":1}'],
    ['{"model":"x","a":null}', '{"model":"up"}'],
    ['{ "b" : [1,{"a":2}] , "a" : null , "model" : "x" }', '{ "b" : [1,{"a":2}] , "model" : "up" }'],
    ['{"a":null,"a\\u0000":1,"model":"x"}', '{"a\\u0000":1,"model":"up"}'],
    ['{"mod\\u0065l":"x"}', '{"mod\\u0065l":"up"}'],
  ])('%s → %s', (json, out) => {
    expect(editTopLevel(json, edits, '', Object.keys(JSON.parse(json)).length)).toBe(out)
  })
  test('inserts first; a duplicated key or a non-object → null (the caller re-serialises)', () => {
    expect(editTopLevel('{"model":"x"}', edits, '"n":1', 1)).toBe('{"n":1,"model":"up"}')
    expect(editTopLevel('{"model":"x","model":"y"}', edits, '', 1)).toBeNull()
    expect(editTopLevel('[1]', edits, '', 1)).toBeNull()
  })
  test('strings with quotes, backslashes and braces are skipped whole', () => {
    const json = '{"s":"a\\\\","t":"\\"}{[","model":"x"}'
    expect(topLevelFields(json)!.length).toBe(12)
    expect(editTopLevel(json, edits, '', 3)).toBe('{"s":"a\\\\","t":"\\"}{[","model":"up"}')
  })
})

describe('forwardBody', () => {
  const model = { name: 'm', upstream_name: 'up', max_output_tokens: 100, temperature: { min: 0, max: 0.7 } }
  const body = (json: string) =>
    forwardBody(validateChatRequest(parseChatBody(json)), json, model as ModelConfig, 'max_completion_tokens')
  // Issue 22: these asserted an injected max_tokens (the model's maximum) and temperature — the
  // defaults the upstream applies by itself, which OpenAI's reasoning models refuse. None is added.
  test('no default is added: the upstream applies its own', () => {
    expect(body('{"model":"p/m","messages":[{"role":"user","content":"hi"}]}')).toBe(
      '{"model":"up","messages":[{"role":"user","content":"hi"}]}',
    )
  })
  test('max_tokens goes as max_completion_tokens; to a max_tokens server the reverse', () => {
    const json = '{"model":"p/m","max_tokens":7,"messages":[{"role":"user","content":"hi"}]}'
    expect(body(json)).toBe(
      '{"max_completion_tokens":7,"model":"up","messages":[{"role":"user","content":"hi"}]}',
    )
    const old = '{"model":"p/m","max_completion_tokens":7,"messages":[{"role":"user","content":"hi"}]}'
    expect(
      forwardBody(validateChatRequest(parseChatBody(old)), old, model as ModelConfig, 'max_tokens'),
    ).toBe('{"max_tokens":7,"model":"up","messages":[{"role":"user","content":"hi"}]}')
  })
  test('null max_tokens counts as unset; a client stream_options null is replaced', () => {
    const out = body(
      '{"model":"p/m","messages":[{"role":"user","content":"hi"}],"max_tokens":null,"stream":true,"stream_options":null,"temperature":0}',
    )
    expect(out).toBe(
      '{"stream_options":{"include_usage":true},"model":"up","messages":[{"role":"user","content":"hi"}],"stream":true,"temperature":0}',
    )
  })
  test('a stream that already asks for usage is sent untouched but for the model', () => {
    const json =
      '{"model":"p/m","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true},"max_completion_tokens":5,"temperature":0.1}'
    expect(body(json)).toBe(json.replace('"p/m"', '"up"'))
  })
})

describe('ChunkScan', () => {
  const scan = new ChunkScan()
  test('finds model, usage, choices, finish and text characters', () => {
    scan.read(
      '{"model":"g","choices":[{"index":0,"delta":{"content":"ab","tool_calls":[{"index":0,"function":{"name":"f","arguments":"{\\"x\\":1}"}}]},"finish_reason":"tool_calls"}],"usage":null}',
    )
    expect(scan).toMatchObject({
      ok: true,
      choices: 1,
      finish: true,
      usageNull: true,
      error: false,
      bytes: 2 + 1 + 7,
    })
  })
  test('finish_reason with JSON whitespace around its colon: a value finishes, null does not', () => {
    const chunk = (f: string) => `{"model":"g","choices":[{"index":0,"delta":{},${f}}],"usage":null}`
    for (const [f, finish] of [
      ['"finish_reason":"stop"', true],
      ['"finish_reason": "stop"', true],
      ['"finish_reason" :\t"length"', true],
      ['"finish_reason":null', false],
      ['"finish_reason": null', false],
      ['"finish_reason" : null', false],
    ] as const) {
      scan.read(chunk(f))
      expect([f, scan.finish]).toEqual([f, finish])
    }
  })
  test('usage first, usage alone, nested error keys, garbage', () => {
    scan.read('{"usage":{"prompt_tokens":1},"choices":[]}')
    expect(scan.ok && scan.choices === 0).toBe(true)
    expect(
      '{"usage":{"prompt_tokens":1},"choices":[]}'.slice(0, scan.usageCutStart) +
        '{"usage":{"prompt_tokens":1},"choices":[]}'.slice(scan.usageCutEnd),
    ).toBe('{"choices":[]}')
    scan.read('{"choices":[{"delta":{"error":1}}]}')
    expect(scan.error).toBe(false)
    for (const bad of ['{"id": "x", oops', '[]', 'hello', '{"a":1}}', '{"a":"unterminated}']) {
      scan.read(bad)
      expect(scan.ok).toBe(false)
    }
  })
})

describe('ChatRelay', () => {
  test('equals the decode → ChatChunkEncoder output on the mock’s text and tool streams', () => {
    for (const tools of [[], ['get_weather', 'get_time']]) {
      for (const includeUsage of [false, true]) {
        const frames = buildStreamFrames({ model: 'gpt-4o-mini', created: 1, words: 4, usage: true, tools })
        const datas = frames
          .map((f) => dec.decode(f))
          .join('')
          .split('\n\n')
          .filter(Boolean)
          .map((e) => e.slice('data: '.length))
        const relay = new ChatRelay('p/m', includeUsage, 'p')
        const old = new ChatChunkEncoder('p/m', includeUsage)
        let mine = ''
        let theirs = ''
        for (const data of datas) {
          mine += text(relay.encode({ data })) ?? ''
          if (data !== '[DONE]') theirs += text(old.encode(JSON.parse(data))) ?? ''
        }
        mine += text(relay.end())
        theirs += text(old.end())
        expect(mine).toBe(theirs)
        expect(relay.usage()).toEqual(old.usage())
        expect(relay.relayedBytes()).toBe(old.relayedBytes())
      }
    }
  })

  test('spaced JSON (Python’s json.dumps) and fields nested before `choices` take the general scan, same edits', () => {
    const relay = new ChatRelay('p/m', false, 'p')
    const spaced =
      '{"id": "c", "model": "g", "choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}], "usage": null}'
    expect(text(relay.encode({ data: spaced }))).toBe(
      `data: ${spaced.replace('"model": "g"', '"model": "p/m"').replace(', "usage": null', '')}\n\n`,
    )
    const nested =
      '{"x":{"model":"no"},"model":"g","choices":[],"usage":{"prompt_tokens":2,"completion_tokens":1}}'
    expect(relay.encode({ data: nested })).toBeNull()
    expect(relay.usage() as unknown).toEqual({ prompt_tokens: 2, completion_tokens: 1 })
    expect(relay.relayedBytes()).toBe(2)
    const kept = new ChatRelay('p/m', true, 'p')
    expect(text(kept.encode({ data: nested }))).toBe(
      `data: ${nested.replace('"model":"g"', '"model":"p/m"')}\n\n`,
    )
  })

  test('adds model and `"usage":null` where the upstream left them out, as the encoder did', () => {
    const relay = new ChatRelay('p/m', true, 'p')
    expect(text(relay.encode({ data: '{"choices":[{"delta":{}}]}' }))).toBe(
      'data: {"choices":[{"delta":{}}],"model":"p/m","usage":null}\n\n',
    )
  })

  test('an unknown field and the upstream’s number spelling survive; a multi-line event stays framed', () => {
    const relay = new ChatRelay('p/m', false, 'p')
    expect(text(relay.encode({ data: '{"model":"g","x":1.50,"choices":[]}' }))).toBe(
      'data: {"model":"p/m","x":1.50,"choices":[]}\n\n',
    )
    expect(text(relay.encode({ data: '{"model":"g",\n"choices":[]}' }))).toBe(
      'data: {"model":"p/m",\ndata: "choices":[]}\n\n',
    )
  })

  test('a malformed event is skipped and counted, never relayed; the answer around it goes on', () => {
    const relay = new ChatRelay('p/m', false, 'p')
    expect(
      relay.encodeText({ data: '{"choices":[{"delta":{"content":"a"},"finish_reason":null}]}' }),
    ).not.toBeNull()
    expect(relay.encodeText({ data: '{"id": "x", oops' })).toBeNull()
    expect(relay.encodeText({ data: '{"choices":[{"delta":{},"finish_reason":"stop"}]}' })).not.toBeNull()
    expect(relay.malformed()).toBe(1)
    expect(relay.failure()).toBeNull()
    expect(text(relay.end())).toBe('data: [DONE]\n\n')
    // Nothing but garbage: not the upstream's protocol at all.
    const garbage = new ChatRelay('p/m', false, 'p')
    expect(garbage.encodeText({ data: 'oops' })).toBeNull()
    expect(() => garbage.end()).toThrow('no stream event was a JSON object')
  })

  test('failures: error events, garbage, no choices, an end before [DONE] without a finish_reason', () => {
    const fails = (data: string, code: string, event?: string) => {
      const relay = new ChatRelay('p/m', false, 'p')
      const first = '{"model":"g","choices":[{"delta":{"content":"a"},"finish_reason":null}]}'
      expect(relay.encodeText({ data: first })).toBe(
        'data: {"model":"p/m","choices":[{"delta":{"content":"a"},"finish_reason":null}]}\n\n',
      )
      // The failed event becomes the gateway's error frame; the relay ends there, without [DONE].
      const frame = relay.encodeText({ data, event })!
      expect(JSON.parse(frame.slice('data: '.length)).error.code).toBe(code)
      expect(relay.failure()?.code).toBe(code)
      expect(relay.encodeText({ data: first })).toBeNull()
      expect(relay.end()).toBeNull()
    }
    fails('{"error":{"message":"boom"}}', 'upstream_error')
    fails('{"message":"boom"}', 'upstream_error', 'error')
    // A malformed event is skipped and counted (DESIGN §10), never relayed: see the test below.
    fails('{"id":"x"}', 'upstream_invalid_response')
    const cut = new ChatRelay('p/m', false, 'p')
    cut.encode({ data: '{"choices":[{"delta":{"content":"a"},"finish_reason":null}]}' })
    expect(() => cut.end()).toThrow(GatewayError)
    const finished = new ChatRelay('p/m', false, 'p')
    finished.encode({ data: '{"choices":[{"delta":{},"finish_reason":"stop"}]}' })
    expect(text(finished.end())).toBe('data: [DONE]\n\n')
    expect(finished.encode({ data: '[DONE]' })).toBeNull()
    expect(finished.encode({ data: 'after done' })).toBeNull()
  })
})
