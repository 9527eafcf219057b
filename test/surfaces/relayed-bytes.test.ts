/**
 * The count a stream without usage settles by (DESIGN §11, pipeline/charge.ts): the UTF-8 bytes
 * of generated text relayed. Measured on the real recordings, those bytes are never fewer than
 * the output tokens the provider billed for that text; and every stream encoder counts them (the
 * byte relays as written, escapes included: never fewer), non-ASCII and escaped text too.
 */
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import type { ChatCompletionChunk } from '../../src/operations/chat.ts'
import { ChatBytes } from '../../src/surfaces/chat/relay-bytes.ts'
import { ChatRelay } from '../../src/surfaces/chat/relay-stream.ts'
import { ChatChunkEncoder } from '../../src/surfaces/chat/stream-encoder.ts'
import { MessagesRelay } from '../../src/surfaces/messages/pass-through.ts'
import { ResponsesRelay } from '../../src/surfaces/responses/relay.ts'
import { chunkTextBytes, utf8Bytes } from '../../src/usage/estimate.ts'

const RECORDED = new URL('../fixtures/reference/recorded/', import.meta.url)
const events = (name: string): any[] =>
  readFileSync(new URL(name, RECORDED), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l))
const bytes = (s: unknown) => (typeof s === 'string' ? Buffer.byteLength(s) : 0)

describe('on the recordings, the bytes of text relayed ≥ the output tokens billed', () => {
  for (const name of ['anthropic-text', 'anthropic-tool', 'anthropic-thinking']) {
    test(name, () => {
      let text = 0
      let billed = 0
      for (const e of events(`${name}.chunks.txt`)) {
        // Text, thinking and tool input; a thinking block's signature is relayed but not counted here.
        if (e.type === 'content_block_delta')
          text += bytes(e.delta.text) + bytes(e.delta.thinking) + bytes(e.delta.partial_json)
        if (e.type === 'message_delta') billed = e.usage.output_tokens
      }
      expect(billed).toBeGreaterThan(0)
      expect(text).toBeGreaterThanOrEqual(billed)
    })
  }

  test('openai-responses-text, -tool and the four responses of -reasoning', () => {
    const seen: Array<[number, number]> = []
    for (const name of ['openai-responses-text', 'openai-responses-tool', 'openai-responses-reasoning']) {
      let text = 0
      for (const e of events(`${name}.chunks.txt`)) {
        if (e.type?.endsWith('.delta')) text += bytes(e.delta)
        if (e.type === 'response.output_item.added' && e.item.type === 'function_call')
          text += bytes(e.item.name)
        if (e.type === 'response.completed') {
          seen.push([text, e.response.usage.output_tokens])
          text = 0
        }
      }
    }
    expect(seen).toHaveLength(6)
    for (const [text, billed] of seen) expect(text).toBeGreaterThanOrEqual(billed)
  })

  for (const name of ['gemini-text', 'gemini-tool']) {
    test(`${name} (its thoughts are billed apart and never relayed)`, () => {
      let text = 0
      let billed = 0
      for (const e of events(`${name}.chunks.txt`)) {
        for (const c of e.candidates ?? [])
          for (const p of c.content?.parts ?? []) {
            text += bytes(p.text)
            if (p.functionCall)
              text += bytes(p.functionCall.name) + bytes(JSON.stringify(p.functionCall.args))
          }
        if (e.usageMetadata) billed = e.usageMetadata.candidatesTokenCount
      }
      expect(billed).toBeGreaterThan(0)
      expect(text).toBeGreaterThanOrEqual(billed)
    })
  }
})

describe('every stream encoder counts UTF-8 bytes, escapes and all', () => {
  const said = 'é\u00e9😀\n中 "q" \\ x'
  const exact = Buffer.byteLength(said)
  // As OpenAI writes it: some characters raw, some escaped.
  const content = JSON.stringify(said).slice(1, -1).replace('中', '\\u4e2d').replace('é', '\\u00e9')
  const data = `{"id":"c","object":"chat.completion.chunk","created":1,"model":"g","choices":[{"index":0,"delta":{"content":"${content}"},"finish_reason":null}]}`

  test('utf8Bytes and chunkTextBytes', () => {
    expect(utf8Bytes(said)).toBe(exact)
    expect(chunkTextBytes(JSON.parse(data) as ChatCompletionChunk)).toBe(exact)
  })

  test('the parsed encoder and the text relay count the decoded bytes; the byte relay at least those', () => {
    const parsed = new ChatChunkEncoder('p/m', false)
    parsed.encode(JSON.parse(data))
    expect(parsed.relayedBytes()).toBe(exact)
    const text = new ChatRelay('p/m', false, 'p')
    text.encode({ data })
    expect(text.relayedBytes()).toBe(exact)
    const raw = new ChatBytes('p/m', false, 1 << 20, 'p')
    raw.stage.encode(Buffer.from(`data: ${data}\n\n`))
    expect(raw.relayedBytes()).toBeGreaterThanOrEqual(exact)
    expect(raw.relayedBytes()).toBe(Buffer.byteLength(content))
    // A content ending in an escaped backslash ends at its quote, not the next field's.
    const slashed = data.replace(`"content":"${content}"`, '"content":"x\\\\","refusal":null,"role":"abc"')
    const ending = new ChatBytes('p/m', false, 1 << 20, 'p')
    ending.stage.encode(Buffer.from(`data: ${slashed}\n\n`))
    expect(ending.relayedBytes()).toBe(3)
  })

  test('the Responses pass-through counts its delta events', () => {
    const relay = new ResponsesRelay('p/m', 'p')
    const delta = `{"type":"response.output_text.delta","item_id":"m","output_index":0,"content_index":0,"delta":"${content}","logprobs":[],"obfuscation":"abcdef","sequence_number":4}`
    relay.encode(Buffer.from(`event: response.output_text.delta\ndata: ${delta}\n\n`))
    expect(relay.relayedBytes()).toBe(Buffer.byteLength(content))
    expect(relay.relayedBytes()).toBeGreaterThanOrEqual(exact)
  })

  // A string ending in an escaped backslash, then more strings: its bytes, not the next ones'.
  const slash = JSON.stringify(`${said}\\`).slice(1, -1)
  const messages = () =>
    new MessagesRelay({
      modelId: 'a/c',
      provider: { prefix: 'a', kind: 'anthropic', base_url: 'http://127.0.0.1:1', api_key: 'k', models: [] },
    } as never)

  test('the pass-throughs count pretty-printed and reordered events as compact ones, and a string ending in a backslash exactly', () => {
    for (const [value, spaced] of [
      [content, false],
      [content, true],
      [slash, false],
      [slash, true],
    ] as const) {
      const [c, s] = spaced ? [': ', ', '] : [':', ',']
      const responses = new ResponsesRelay('p/m', 'p')
      const delta = `{"type"${c}"response.output_text.delta"${s}"item_id"${c}"m"${s}"delta"${c}"${value}"${s}"logprobs"${c}[]${s}"obfuscation"${c}"abcdef"${s}"sequence_number"${c}4}`
      responses.encode(Buffer.from(`event: response.output_text.delta\ndata: ${delta}\n\n`))
      expect(responses.relayedBytes()).toBe(Buffer.byteLength(value))
      // Text, thinking and tool input, as Anthropic orders the fields and reordered.
      const anthropic = messages()
      const blocks = [
        `{"type"${c}"content_block_delta"${s}"index"${c}0${s}"delta"${c}{"type"${c}"text_delta"${s}"text"${c}"${value}"}}`,
        `{"type"${c}"content_block_delta"${s}"index"${c}0${s}"delta"${c}{"type"${c}"thinking_delta"${s}"thinking"${c}"${value}"}}`,
        `{"delta"${c}{"partial_json"${c}"${value}"${s}"type"${c}"input_json_delta"}${s}"index"${c}1${s}"type"${c}"content_block_delta"}`,
      ]
      for (const block of blocks)
        anthropic.encode(Buffer.from(`event: content_block_delta\ndata: ${block}\n\n`))
      expect(anthropic.relayedBytes!()).toBe(3 * Buffer.byteLength(value))
    }
  })
})
