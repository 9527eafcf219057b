/**
 * A large pass-through body sent as its pieces (`json/spliced.ts`, `providers/request-body.ts`):
 * the upstream receives exactly the joined text, under a `content-length` (not chunked), also where
 * a slice boundary falls inside a surrogate pair or the text is not ASCII.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { spliceTopLevel } from '../../src/json/fields.ts'
import { SPLICE_MIN, SplicedText } from '../../src/json/spliced.ts'
import { requestBody } from '../../src/providers/request-body.ts'
import { forwardBody as messagesBody } from '../../src/surfaces/messages/pass-through.ts'
import { forwardBody as responsesBody } from '../../src/surfaces/responses/forward-body.ts'

const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  maxRequestBodySize: 16 * 1024 * 1024,
  async fetch(req) {
    const bytes = new Uint8Array(await req.arrayBuffer())
    return Response.json({
      text: new TextDecoder().decode(bytes),
      // The bytes as they arrived, for a body whose text would decode the same either way.
      bytes: bytes.byteLength,
      sha256: new Bun.CryptoHasher('sha256').update(bytes).digest('hex'),
      length: req.headers.get('content-length'),
      chunked: req.headers.get('transfer-encoding'),
    })
  },
})
afterAll(() => server.stop(true))

interface Received {
  text: string
  bytes: number
  sha256: string
  length: string | null
  chunked: string | null
}

async function send(body: string | SplicedText): Promise<Received> {
  const headers = new Headers({ 'content-type': 'application/json' })
  const res = await fetch(`http://127.0.0.1:${server.port}/`, {
    method: 'POST',
    headers,
    body: requestBody(body, headers),
  })
  return (await res.json()) as Received
}

const sha256 = (bytes: Uint8Array) => new Bun.CryptoHasher('sha256').update(bytes).digest('hex')

describe('a spliced body', () => {
  test('a large body edited at the top level is kept as pieces, and arrives as the joined text', async () => {
    // The piece after the model: an emoji (a surrogate pair) across its first 256 K slice's end.
    const before = ',"messages":[{"role":"user","content":"'.length
    const content = `${'é'.repeat(256 * 1024 - 1 - before)}😀${'a'.repeat(300_000)}😀${'ü'.repeat(SPLICE_MIN)}`
    const text = `{"model":"p/m","messages":[{"role":"user","content":"${content}"}],"stream":false}`
    const edited = spliceTopLevel(text, new Map([['model', '"up"']]), '"n":1', 3)
    expect(edited).toBeInstanceOf(SplicedText)
    const joined = String(edited)
    expect(joined).toBe(
      `{"n":1,"model":"up","messages":[{"role":"user","content":"${content}"}],"stream":false}`,
    )
    const got = await send(edited!)
    expect(got.text === joined).toBe(true)
    expect(got.length).toBe(String(Buffer.byteLength(joined)))
    expect(got.chunked).toBeNull()
  })

  test('a body of only Latin-1 characters (kept 8-bit by JavaScriptCore) arrives as its UTF-8 bytes', async () => {
    // 1.25 M of `é`: one byte each in the engine's 8-bit string, two in UTF-8. Written as Latin-1,
    // the bytes would fall short of the content-length counted in UTF-8.
    const content = 'é'.repeat(1_250_000)
    const text = `{"model":"p/m","messages":[{"role":"user","content":"${content}"}]}`
    const edited = spliceTopLevel(text, new Map([['model', '"up"']]), '', 2)
    expect(edited).toBeInstanceOf(SplicedText)
    const utf8 = Buffer.from(String(edited), 'utf8')
    const got = await send(edited!)
    expect(got.length).toBe(String(utf8.byteLength))
    expect(got.bytes).toBe(utf8.byteLength)
    expect(got.sha256).toBe(sha256(utf8))
  })

  test('a small body stays one string, sent as it is', async () => {
    const edited = spliceTopLevel('{"model":"p/m","x":1}', new Map([['model', '"up"']]), '', 2)
    expect(edited).toBe('{"model":"up","x":1}')
    expect((await send(edited!)).text).toBe('{"model":"up","x":1}')
  })
})

describe("the Messages pass-through's upstream body", () => {
  const entry = { model: { name: 'claude', upstream_name: 'claude-x' } } as never

  test("the client's text with its model swapped, every other byte as sent (spliced when large)", () => {
    const text =
      '{ "model" : "a/claude",\n  "max_tokens": 1.0e1, "messages": [{"role":"user","content":"hi"}] }'
    const view = JSON.parse(text) as { model: string }
    expect(messagesBody(view, entry, text)).toBe(
      '{ "model" : "claude-x",\n  "max_tokens": 1.0e1, "messages": [{"role":"user","content":"hi"}] }',
    )
    const large = `{"model":"a/claude","max_tokens":5,"messages":[{"role":"user","content":"${'a'.repeat(SPLICE_MIN)}"}]}`
    const body = messagesBody(JSON.parse(large) as { model: string }, entry, large)
    expect(body).toBeInstanceOf(SplicedText)
    expect(String(body) === large.replace('"a/claude"', '"claude-x"')).toBe(true)
  })

  test('a duplicated key, or no text (count_tokens), is re-serialised', () => {
    const text = '{"model":"a/claude","model":"a/claude","max_tokens":5}'
    expect(messagesBody(JSON.parse(text) as { model: string }, entry, text)).toBe(
      '{"model":"claude-x","max_tokens":5}',
    )
    expect(messagesBody({ model: 'a/claude' }, entry)).toBe('{"model":"claude-x"}')
  })
})

describe("the Responses pass-through's upstream body", () => {
  const set = { model: '"gpt-x"', store: 'false' }

  test("a large body is spliced: the client's text with model and store edited, not copied", async () => {
    const text = `{"model":"o/gpt","input":"${'é'.repeat(SPLICE_MIN)}","store":true,"top_p":1.0}`
    const body = responsesBody(JSON.parse(text), text, set)
    expect(body).toBeInstanceOf(SplicedText)
    const joined = text.replace('"o/gpt"', '"gpt-x"').replace('"store":true', '"store":false')
    expect(String(body) === joined).toBe(true)
    const got = await send(body)
    expect(got.sha256).toBe(sha256(Buffer.from(joined, 'utf8')))
  })

  test('a duplicated key is re-serialised, the set fields last as JSON.stringify puts new keys', () => {
    const text = '{"model":"o/gpt","model":"o/gpt","input":"hi"}'
    expect(responsesBody(JSON.parse(text), text, set)).toBe('{"model":"gpt-x","input":"hi","store":false}')
  })
})
