/** The helpers `src/providers/shared/` gives the Anthropic and Gemini adapters. */
import { describe, expect, test } from 'bun:test'
import { toStopSequences } from '../../../src/providers/shared/apply-param-map.ts'
import { assistantMessage } from '../../../src/providers/shared/assistant-message.ts'
import { cleanErrorDetail, parseErrorBody } from '../../../src/providers/shared/error-rules.ts'
import { mapContentParts } from '../../../src/providers/shared/map-content-parts.ts'
import { parseDataUrl, parseImageUrl } from '../../../src/providers/shared/parse-data-url.ts'
import { parseJsonEvent } from '../../../src/providers/shared/parse-json-event.ts'
import { GatewayError } from '../../../src/util/errors.ts'

const thrown = (f: () => unknown): GatewayError => {
  try {
    f()
  } catch (e) {
    expect(e).toBeInstanceOf(GatewayError)
    return e as GatewayError
  }
  throw new Error('expected a GatewayError')
}

describe('shared provider helpers', () => {
  test('data URLs: base64 only, media type lower-cased', () => {
    expect(parseDataUrl('data:Image/PNG;base64,AAAA')).toEqual({ mediaType: 'image/png', data: 'AAAA' })
    expect(parseDataUrl('data:text/plain,hello')).toBeNull()
    expect(parseImageUrl('HTTPS://x.test/a.png', 'p')).toEqual({ url: 'HTTPS://x.test/a.png' })
    const err = thrown(() => parseImageUrl('ftp://x.test/a.png', 'messages[0].content[1].image_url.url'))
    expect([err.status, err.code, err.param]).toEqual([
      400,
      'invalid_image_url',
      'messages[0].content[1].image_url.url',
    ])
  })

  test('content: a string is one text part; array parts get indexed params; nulls are dropped', () => {
    const seen: string[] = []
    const texts = (content: Parameters<typeof mapContentParts>[0]) =>
      mapContentParts(content, 'messages[2].content', (part, param) => {
        seen.push(param)
        return part.type === 'text' && part.text !== '' ? part.text : null
      })
    expect(texts('Hi')).toEqual(['Hi'])
    expect(texts('')).toEqual([])
    expect(texts(null)).toEqual([])
    expect(
      texts([
        { type: 'text', text: 'a' },
        { type: 'text', text: '' },
        { type: 'text', text: 'b' },
      ]),
    ).toEqual(['a', 'b'])
    expect(seen.slice(-3)).toEqual([
      'messages[2].content[0]',
      'messages[2].content[1]',
      'messages[2].content[2]',
    ])
  })

  test('error bodies: JSON objects only, the first element of an array', () => {
    expect(parseErrorBody('[{"error":{"code":400}}]')).toEqual({ error: { code: 400 } })
    expect(parseErrorBody('{"type":"error"}')).toEqual({ type: 'error' })
    expect(parseErrorBody('upstream exploded')).toBeNull()
    expect(parseErrorBody('42')).toBeNull()
  })

  test('provider text loses our key and labelled secrets, and ends as a sentence', () => {
    const key = 'provider-key-abcdef'
    expect(cleanErrorDetail(`bad key ${key}`, key)).toBe('bad key ***.')
    expect(cleanErrorDetail('x-api-key: abcdefgh12345 refused', undefined)).toBe('x-api-key: *** refused.')
    expect(cleanErrorDetail('Overloaded!', undefined)).toBe('Overloaded!')
  })

  test('stop sequences, assistant messages and stream events', () => {
    expect(toStopSequences('END')).toEqual(['END'])
    expect(toStopSequences([])).toBeUndefined()
    const call = { id: 'c1', type: 'function' as const, function: { name: 'f', arguments: '{}' } }
    expect(assistantMessage('', [call])).toEqual({
      role: 'assistant',
      content: null,
      refusal: null,
      tool_calls: [call],
    })
    expect(assistantMessage('', [])).toEqual({ role: 'assistant', content: '', refusal: null })
    expect(parseJsonEvent({ data: '{"a":1}' }, 'p')).toEqual({ a: 1 })
    const err = thrown(() => parseJsonEvent({ event: 'ping', data: '[1]' }, 'anthropic'))
    expect([err.status, err.code]).toEqual([502, 'upstream_invalid_response'])
    expect(err.message).toContain("stream event 'ping'")
  })
})
