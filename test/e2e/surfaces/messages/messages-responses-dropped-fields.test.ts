/**
 * The Messages and Responses surfaces on translated routes left out what the chat form has no
 * place for without a word: Messages `top_k` and any unknown top-level field, Responses' unknown
 * top-level fields. The chat surface names what it drops in `x-switchyard-dropped-params`; these now
 * do the same, in the client's own field names. Messages `top_k` is translated where the target
 * reads it (Gemini's `topK`). A pass-through route sends everything as it came and names nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTranslationBed, type TranslationBed } from '../../../support/translation-bed.ts'

const HEADER = 'x-switchyard-dropped-params'
let bed: TranslationBed
beforeAll(async () => {
  bed = await startTranslationBed()
})
afterAll(() => bed.stop())

describe('Messages, translated', () => {
  test('to Gemini: top_k becomes topK, unknown fields are named', async () => {
    const { body, headers } = await bed.exchange('gm', 'messages', 'gm/text', {
      top_k: 40,
      context_management: { edits: [] },
      container: 'c_1',
    })
    expect(body.generationConfig.topK).toBe(40)
    expect(headers.get(HEADER)).toBe('context_management, container')
  })

  test('to an OpenAI-compatible upstream: top_k is not sent, and is named', async () => {
    const { body, headers } = await bed.exchange('oa', 'messages', 'oa/gpt-4o-mini', { top_k: 40 })
    expect(body.top_k).toBeUndefined()
    expect(headers.get(HEADER)).toBe('top_k')
  })

  test('output_config: format and effort are read; any other part is named', async () => {
    const { headers } = await bed.exchange('gm', 'messages', 'gm/text', {
      output_config: { task_budget: 5 },
    })
    expect(headers.get(HEADER)).toBe('output_config.task_budget')
  })

  test('nothing left out, nothing named; a field sent as null asks for nothing', async () => {
    const { headers } = await bed.exchange('gm', 'messages', 'gm/text', { top_k: 5, container: null })
    expect(headers.get(HEADER)).toBeNull()
  })

  test('pass-through to Anthropic: sent as it came, nothing named', async () => {
    const { body, headers } = await bed.exchange('an', 'messages', 'an/text', {
      top_k: 40,
      context_management: { edits: [] },
    })
    expect(body.top_k).toBe(40)
    expect(body.context_management).toEqual({ edits: [] })
    expect(headers.get(HEADER)).toBeNull()
  })
})

describe('Responses, translated', () => {
  test.each([
    ['gm', 'gm/text'],
    ['oa', 'oa/gpt-4o-mini'],
  ] as const)('to %s: unknown top-level fields are named', async (upstream, model) => {
    const { body, headers } = await bed.exchange(upstream, 'responses', model, { top_k: 40, min_p: 0.1 })
    expect(JSON.stringify(body)).not.toContain('min_p')
    expect(headers.get(HEADER)).toBe('top_k, min_p')
  })

  test('pass-through to a Responses upstream: sent as it came, nothing named', async () => {
    const { body, headers } = await bed.exchange('oair', 'responses', 'oair/text', { top_k: 40 })
    expect(body.top_k).toBe(40)
    expect(headers.get(HEADER)).toBeNull()
  })
})

describe('the header names what the client sent, and stays a valid header', () => {
  // A key is the client's own text: a line break or a character past Latin-1 in the header made
  // the response fail (the connection was reset), on chat too; thousands of keys made it too long.
  test.each(['chat', 'messages', 'responses'] as const)('%s: odd and many keys', async (surface) => {
    const odd = await bed.post(surface, 'gm/text', { 'a\r\nx-evil: 1': 1, 'é€': 2, ['k'.repeat(5000)]: 3 })
    expect(odd.status).toBe(200)
    await odd.text()
    expect(odd.headers.get('x-evil')).toBeNull()
    expect(odd.headers.get(HEADER)).toStartWith('a\\r\\nx-evil: 1, \\u00e9\\u20ac, kkkk')
    expect(odd.headers.get(HEADER)!.length).toBeLessThan(200)
    const keys = Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`unknown_${i}`, i]))
    const many = await bed.post(surface, 'gm/text', keys)
    expect(many.status).toBe(200)
    await many.text()
    expect(many.headers.get(HEADER)).toStartWith('unknown_0, unknown_1, ')
    expect(many.headers.get(HEADER)).toEndWith('... (3000 in all)')
    expect(many.headers.get(HEADER)!.length).toBeLessThan(1100)
  })
})
