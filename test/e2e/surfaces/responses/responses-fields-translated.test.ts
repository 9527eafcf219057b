/**
 * Responses request fields on translated routes. The bug: every top-level field the translation did
 * not read was dropped in silence — Chat Completions parameters sent to `/v1/responses` by mistake
 * (`n`, `seed`, `stop`, ... which OpenAI's Responses API refuses as unknown), `text.verbosity`,
 * `moderation`. Now each `CreateResponse` field (shared/reference/openai-responses-schemas.json) is
 * translated, refused by name where the route cannot honour it, or accepted because it changes
 * nothing a translated route answers (README "Responses translation" says which and why).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTranslationBed, type TranslationBed } from '../../../support/translation-bed.ts'

let bed: TranslationBed
beforeAll(async () => {
  bed = await startTranslationBed()
})
afterAll(() => bed.stop())

describe('Chat Completions parameters: 400 unknown_parameter naming them on translated routes', () => {
  test.each([
    ['n', 3],
    ['seed', 7],
    ['stop', ['END']],
    ['presence_penalty', 0.5],
    ['frequency_penalty', 0.5],
    ['logit_bias', { '50256': -100 }],
    ['max_tokens', 100],
    ['response_format', { type: 'json_object' }],
    ['reasoning_effort', 'low'],
    ['verbosity', 'low'],
  ])('%s', async (field, value) => {
    for (const id of ['oa/gpt-4o-mini', 'an/text', 'gm/text']) {
      const body = await bed.refused('responses', id, { [field]: value }, field)
      expect(body.error.code).toBe('unknown_parameter')
    }
  })

  test('a wire: responses upstream gets them as sent (it answers for its own API)', async () => {
    const body = await bed.sent('oair', 'responses', 'oair/text', { seed: 7 })
    expect(body.seed).toBe(7)
  })
})

describe('translated', () => {
  test('text.verbosity → chat verbosity', async () => {
    const body = await bed.sent('oa', 'responses', 'oa/gpt-4o-mini', { text: { verbosity: 'low' } })
    expect(body.verbosity).toBe('low')
  })

  test('moderation → chat moderation (OpenAI moderates chat completions too)', async () => {
    const moderation = { model: 'omni-moderation-latest' }
    const body = await bed.sent('oa', 'responses', 'oa/gpt-4o-mini', { moderation })
    expect(body.moderation).toEqual(moderation)
  })

  test.each(['an/text', 'gm/text'])(
    'moderation to %s, which no one would run → 400 naming it',
    async (id) => {
      const moderation = { model: 'omni-moderation-latest' }
      await bed.refused('responses', id, { moderation }, 'moderation')
      await bed.refused('chat', id, { moderation }, 'moderation')
    },
  )
})

describe('left out (and named: responses-bookkeeping-named.test.ts): nothing the model writes changes', () => {
  test.each([
    ['max_tool_calls', 2],
    ['service_tier', 'flex'],
    ['prompt_cache_key', 'abc'],
    ['truncation', 'auto'],
    ['metadata', { job: '7' }],
    ['include', ['reasoning.encrypted_content']],
  ])('%s', async (field, value) => {
    const body = await bed.sent('an', 'responses', 'an/text', { [field]: value })
    expect(body[field]).toBeUndefined()
  })
})
