/**
 * `eventValue` (surfaces/byte-relay.ts), which the Messages, Responses and Gemini pass-through gates
 * parse each event with: a one-line `data: {…}` event (after an `event:` line or not) is parsed on
 * its bytes (`Bun.JSONL.parseChunk`), any other through its decoded data and `JSON.parse`. Either
 * way the value is `JSON.parse`'s of the event's data, on the inputs where the two parsers could
 * differ; where `JSON.parse` throws it is `NOT_JSON`, and an event without data is `NO_DATA`.
 */
import { describe, expect, test } from 'bun:test'
import { eventValue, NO_DATA, NOT_JSON } from '../../src/surfaces/byte-relay.ts'

const delta = (text: string) =>
  `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"${text}"}}`
const datas: Array<[string, Uint8Array]> = [
  ['plain', Buffer.from(delta('hello there'))],
  ['a duplicated key: the last one', Buffer.from('{"a":1,"a":{"b":2}}')],
  ['__proto__ as a key', Buffer.from('{"__proto__":{"x":1},"y":2}')],
  ['a number past double range', Buffer.from('{"n":1e400,"m":-0}')],
  ['escapes and a lone surrogate', Buffer.from('{"t":"h\\u00e9 \\"q\\" \\ud800 ✓"}')],
  ['two values on the line', Buffer.from(`${delta('one')} {"x":1}`)],
  ['a value and then text', Buffer.from(`${delta('one')}x`)],
  ['a form feed after the value', Buffer.from(`${delta('one')}\f`)],
  ['a carriage return after the value', Buffer.from(`${delta('one')}\r`)],
  ['spaces after the value', Buffer.from(`${delta('one')}   `)],
  ['a trailing comma', Buffer.from('{"a":1,}')],
  ['cut short', Buffer.from(delta('one').slice(0, -3))],
  [
    'invalid UTF-8 in a string',
    Buffer.concat([
      Buffer.from('{"t":"x'),
      Buffer.from([0xff, 0xfe, 0xc3, 0x20, 0xed, 0xa0, 0x80]),
      Buffer.from(' y"}'),
    ]),
  ],
  ['non-ASCII text', Buffer.from(delta('héllo ✓ 😀 wörld'))],
  ['an array', Buffer.from('[1,2]')],
  ['not JSON at all', Buffer.from('hello')],
]

const expected = (data: Uint8Array): unknown => {
  try {
    return JSON.parse(Buffer.from(data).toString('utf8'))
  } catch {
    return NOT_JSON
  }
}
const framings: Array<[string, (data: Uint8Array) => Buffer]> = [
  ['one line', (d) => Buffer.concat([Buffer.from('data: '), d, Buffer.from('\n\n')])],
  ['no space after data:', (d) => Buffer.concat([Buffer.from('data:'), d, Buffer.from('\n\n')])],
  [
    'after an event: line',
    (d) => Buffer.concat([Buffer.from('event: content_block_delta\ndata: '), d, Buffer.from('\n\n')]),
  ],
]

describe('eventValue is JSON.parse of the data, however the event is framed', () => {
  for (const [name, data] of datas)
    for (const [framing, frame] of framings)
      test(`${name}, ${framing}`, () => {
        const ev = frame(data)
        expect(eventValue(ev, 0, ev.length)).toEqual(expected(data))
        // Inside a larger read, at an offset: the same.
        const read = Buffer.concat([Buffer.from(': keep-alive\n\n'), ev, Buffer.from('data: {"z":1}\n\n')])
        expect(eventValue(read, 14, 14 + ev.length)).toEqual(expected(data))
      })

  test('data over two lines is joined as SSE joins it; no data is NO_DATA', () => {
    const ev = Buffer.from('event: x\ndata: {"a":\ndata: 1}\n\n')
    expect(eventValue(ev, 0, ev.length)).toEqual({ a: 1 })
    for (const e of [': comment\n\n', 'event: ping\n\n'])
      expect(eventValue(Buffer.from(e), 0, Buffer.byteLength(e))).toBe(NO_DATA)
  })
})
