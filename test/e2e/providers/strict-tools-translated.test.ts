/**
 * Strict function tools on translated routes. The bug: chat `tools[].function.strict` and a
 * Responses function tool's `strict` reached Anthropic and Gemini as nothing, so the model's tool
 * arguments were no longer held to the schema the client asked them to follow. Now:
 * - Anthropic: `strict: true` on the tool (its strict tool use: grammar-constrained tool inputs);
 * - Gemini: function calling mode `VALIDATED` (calls checked against the schema by constrained
 *   decoding) where the choice left the model free (`auto` or none); `ANY` (a forced call, which
 *   Gemini holds to the schema already) and `NONE` stay as they were.
 * `strict: false` is every upstream's default and is not sent.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type Surface, startTranslationBed, type TranslationBed } from '../../support/translation-bed.ts'

let bed: TranslationBed
beforeAll(async () => {
  bed = await startTranslationBed()
})
afterAll(() => bed.stop())

const PARAMS = {
  type: 'object',
  properties: { city: { type: 'string' } },
  required: ['city'],
  additionalProperties: false,
}

/** Two tools on `surface`, the first with `strict`, plus `extra`. */
function tools(surface: Exclude<Surface, 'messages'>, strict: boolean | undefined, extra = {}) {
  const declared = (name: string, s: boolean | undefined) =>
    surface === 'chat'
      ? {
          type: 'function',
          function: { name, parameters: PARAMS, ...(s === undefined ? {} : { strict: s }) },
        }
      : { type: 'function', name, parameters: PARAMS, ...(s === undefined ? {} : { strict: s }) }
  return { tools: [declared('get_weather', strict), declared('get_time', undefined)], ...extra }
}

describe.each(['chat', 'responses'] as const)('%s → anthropic', (surface) => {
  test('strict: true → the Anthropic tool is strict; the other tool is not', async () => {
    const body = await bed.sent('an', surface, 'an/tool', tools(surface, true))
    expect(body.tools[0]).toMatchObject({ name: 'get_weather', strict: true, input_schema: PARAMS })
    expect('strict' in body.tools[1]).toBe(false)
  })

  test.each([false, undefined])('strict: %p → no strict sent (Anthropic’s default)', async (strict) => {
    const body = await bed.sent('an', surface, 'an/tool', tools(surface, strict))
    expect('strict' in body.tools[0]).toBe(false)
  })
})

describe.each(['chat', 'responses'] as const)('%s → gemini', (surface) => {
  test.each([
    [{}, { mode: 'VALIDATED' }],
    [{ tool_choice: 'auto' }, { mode: 'VALIDATED' }],
    [{ tool_choice: 'required' }, { mode: 'ANY' }],
    [{ tool_choice: 'none' }, { mode: 'NONE' }],
  ])('strict: true, %j → functionCallingConfig %j', async (extra, config) => {
    const body = await bed.sent('gm', surface, 'gm/tool', tools(surface, true, extra))
    expect(body.toolConfig.functionCallingConfig).toEqual(config)
  })

  test('no strict tool → no toolConfig (Gemini’s default, AUTO)', async () => {
    const body = await bed.sent('gm', surface, 'gm/tool', tools(surface, false))
    expect(body.toolConfig).toBeUndefined()
  })
})

test('chat → openai passes strict through as sent', async () => {
  const body = await bed.sent('oa', 'chat', 'oa/gpt-4o-mini', tools('chat', true))
  expect(body.tools[0].function.strict).toBe(true)
})
