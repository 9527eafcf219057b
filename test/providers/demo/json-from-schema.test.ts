/**
 * `jsonFromSchema` writes at most its budget, whatever the text holds (quotes, control
 * characters, surrogate pairs and lone halves, which JSON writes wider) and whatever numbers the
 * schema holds; its strings keep `minLength` / `maxLength`.
 */
import { describe, expect, test } from 'bun:test'
import {
  jsonFromSchema,
  measureSchema,
  SchemaTooLarge,
} from '../../../src/providers/demo/json-from-schema.ts'
import { mulberry32 } from '../../support/malformed-bodies.ts'

const PIECES = ['a', ' ', '"', '\\', '\n', '\u0001', '\u2028', 'é', '\ud83d\ude00', '\ud83d', '\ude00', '{']

describe('the budget holds', () => {
  test('500 seeded schemas and texts: within budget, valid JSON, strings within their lengths', () => {
    const random = mulberry32(7)
    const int = (n: number) => Math.floor(random() * n)
    const seen = { refused: 0, cut: 0, whole: 0 }
    for (let round = 0; round < 500; round++) {
      let text = ''
      for (let i = int(3000); i > 0; i--) text += PIECES[int(PIECES.length)]
      const properties: Record<string, Record<string, unknown>> = {}
      for (let i = int(12); i >= 0; i--) {
        const s: Record<string, unknown> = { type: 'string' }
        if (random() < 0.5) s.minLength = int(200)
        if (random() < 0.5) s.maxLength = int(400)
        properties[`p${i}`] = random() < 0.3 ? { type: 'array', items: s, minItems: int(4) } : s
      }
      const schema = { type: 'object', properties }
      const budget = 200 + int(4000)
      try {
        measureSchema(schema, budget)
      } catch (e) {
        expect(e).toBeInstanceOf(SchemaTooLarge)
        seen.refused++
        continue
      }
      // Measured to fit: the text never makes it refuse (its JSON width is counted exactly).
      const out = jsonFromSchema(schema, text, budget)
      seen[out.cut ? 'cut' : 'whole']++
      expect(out.json.length).toBeLessThanOrEqual(budget)
      const value = JSON.parse(out.json) as Record<string, unknown>
      for (const [name, sub] of Object.entries(properties)) {
        const strings = (Array.isArray(value[name]) ? value[name] : [value[name]]) as string[]
        const s = (sub.items ?? sub) as { minLength?: number; maxLength?: number }
        for (const str of strings) {
          const min = Math.min(s.minLength ?? 0, s.maxLength ?? Number.POSITIVE_INFINITY)
          // Padding to minLength wins over maxLength when both cannot hold.
          expect(str.length).toBeGreaterThanOrEqual(min)
          if ((s.maxLength ?? Number.POSITIVE_INFINITY) >= (s.minLength ?? 0))
            expect(str.length).toBeLessThanOrEqual(s.maxLength ?? Number.POSITIVE_INFINITY)
          // Text then dots: never half a surrogate pair of the text.
          const textPart = str.replace(/\.+$/, '')
          expect(text.startsWith(textPart) || textPart === '').toBe(true)
        }
      }
    }
    for (const n of Object.values(seen)) expect(n).toBeGreaterThan(20)
  })

  test('the text fills what the structure leaves, shared equally; cut says so', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } } }
    const small = jsonFromSchema(schema, 'hello', 100)
    expect(JSON.parse(small.json)).toEqual({ a: 'hello', b: 'hello' })
    expect(small.cut).toBe(false)
    const big = jsonFromSchema(schema, 'x'.repeat(1000), 100)
    expect(big.json.length).toBeLessThanOrEqual(100)
    expect(big.cut).toBe(true)
    const value = JSON.parse(big.json) as { a: string; b: string }
    expect(value.a.length).toBe(value.b.length)
    expect(value.a.length).toBeGreaterThan(35)
  })

  test('the refusal names the schema location and the keyword, through $ref too', () => {
    const refused = (schema: Record<string, unknown>) => {
      try {
        jsonFromSchema(schema, 'hi', 1000)
      } catch (e) {
        return e as SchemaTooLarge
      }
      throw new Error('not refused')
    }
    expect(
      refused({ type: 'object', properties: { 'a/b': { type: 'string', minLength: 5000 } } }),
    ).toMatchObject({
      pointer: '/properties/a~1b',
      keyword: 'minLength 5000',
    })
    expect(
      refused({
        type: 'array',
        minItems: 1,
        items: { $ref: '#/$defs/big' },
        $defs: { big: { minItems: 1e9, type: 'array' } },
      }),
    ).toMatchObject({ pointer: '/$defs/big', keyword: 'minItems 1000000000' })
    // No single keyword: the structure as a whole.
    const props: Record<string, unknown> = {}
    for (let i = 0; i < 300; i++) props[`property_${i}`] = { type: 'integer' }
    expect(refused({ type: 'object', properties: props }).keyword).toBeNull()
  })

  test('`format` names only the listed samples; a __proto__ property is written as a property', () => {
    const out = jsonFromSchema(
      {
        type: 'object',
        properties: {
          when: { type: 'string', format: 'date' },
          odd: { type: 'string', format: 'constructor' },
          ['__proto__']: { type: 'integer', minimum: 3 },
        },
      },
      'hi',
      1000,
    )
    const value = JSON.parse(out.json)
    expect(value).toMatchObject({ when: '2025-01-01', odd: 'hi' })
    expect(Object.getOwnPropertyDescriptor(value, '__proto__')?.value).toBe(3)
  })

  test('a long $ref or type list visited for every item is read once (read per item: minutes)', () => {
    const ref = `#/${'a/'.repeat(500_000)}`
    const refs = jsonFromSchema({ type: 'array', minItems: 6_000, items: { $ref: ref } }, 'hi', 32_768)
    expect(JSON.parse(refs.json)).toHaveLength(6_000)
    const type = [...Array.from({ length: 1_000_000 }, () => 'null'), 'integer']
    const types = jsonFromSchema({ type: 'array', minItems: 6_000, items: { type } }, 'hi', 32_768)
    expect(JSON.parse(types.json)).toEqual(Array.from({ length: 6_000 }, () => 0))
  }, 30_000)
})
