/**
 * Responses fields that OpenAI's Chat Completions API takes under the same name and meaning, on a
 * route translated to an `openai`-kind chat upstream. The bug: `prompt_cache_key`,
 * `prompt_cache_retention`, `prompt_cache_options` and `service_tier` were left out of the chat
 * request (and named in `x-switchyard-dropped-params`) for every provider kind, though OpenAI's
 * chat API takes each (`CreateChatCompletionRequest`, shared/reference): Codex CLI sends
 * `prompt_cache_key` on every turn, so its turns lost their prompt-cache hits at OpenAI; and
 * `safety_identifier` went as chat `user` (and `user` beside it was lost). Now an openai upstream
 * gets each as sent, under its own name, and none is named; anthropic and gemini get none of them,
 * each named once. `metadata` is still left out and named: OpenAI's chat takes it only with
 * `store: true`, which a stateless gateway never sends. Nothing the client did not send is sent.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTranslationBed, type TranslationBed } from '../../../support/translation-bed.ts'

const HEADER = 'x-switchyard-dropped-params'
let bed: TranslationBed
beforeAll(async () => {
  bed = await startTranslationBed()
})
afterAll(() => bed.stop())

const CARRIED: Array<[string, unknown]> = [
  ['prompt_cache_key', 'conv-1'],
  ['prompt_cache_retention', '24h'],
  ['prompt_cache_retention', 'in_memory'],
  ['prompt_cache_options', { ttl: '30m', mode: 'explicit' }],
  ['service_tier', 'flex'],
  ['service_tier', 'priority'],
  ['service_tier', 'auto'],
  ['safety_identifier', 's-1'],
  ['user', 'u-1'],
]

describe('openai chat upstream: forwarded as sent, not named', () => {
  test.each(CARRIED)('%s %p', async (field, value) => {
    const { body, headers } = await bed.exchange('oa', 'responses', 'oa/gpt-4o-mini', { [field]: value })
    expect(body[field]).toEqual(value)
    expect(headers.get(HEADER)).toBeNull()
  })

  test('streamed too, all at once', async () => {
    const fields = Object.fromEntries(CARRIED)
    const { body, headers } = await bed.exchange('oa', 'responses', 'oa/gpt-4o-mini', {
      ...fields,
      stream: true,
    })
    for (const [field, value] of Object.entries(fields)) expect(body[field]).toEqual(value)
    expect(headers.get(HEADER)).toBeNull()
  })

  test('safety_identifier and user both sent: each under its own name', async () => {
    const body = await bed.sent('oa', 'responses', 'oa/gpt-4o-mini', {
      safety_identifier: 's-1',
      user: 'u-1',
    })
    expect(body.safety_identifier).toBe('s-1')
    expect(body.user).toBe('u-1')
  })

  test('nothing the client did not send: no default injected', async () => {
    const body = await bed.sent('oa', 'responses', 'oa/gpt-4o-mini')
    for (const field of [
      'prompt_cache_key',
      'prompt_cache_retention',
      'prompt_cache_options',
      'service_tier',
      'safety_identifier',
      'user',
      'metadata',
      'store',
    ]) {
      expect(`${field}: ${JSON.stringify(body[field])}`).toBe(`${field}: undefined`)
    }
  })

  test('null asks for nothing: not sent, not named', async () => {
    const { body, headers } = await bed.exchange('oa', 'responses', 'oa/gpt-4o-mini', {
      prompt_cache_key: null,
      service_tier: null,
      safety_identifier: null,
    })
    expect(body).not.toHaveProperty('prompt_cache_key')
    expect(body).not.toHaveProperty('service_tier')
    expect(body).not.toHaveProperty('safety_identifier')
    expect(headers.get(HEADER)).toBeNull()
  })

  test('metadata (chat takes it only with store: true, never sent) and a tier chat lacks: left out, named', async () => {
    const { body, headers } = await bed.exchange('oa', 'responses', 'oa/gpt-4o-mini', {
      metadata: { job: '7' },
      service_tier: 'ultrafast',
      prompt_cache_key: 'conv-1',
    })
    expect(body).not.toHaveProperty('metadata')
    expect(body).not.toHaveProperty('store')
    expect(body).not.toHaveProperty('service_tier')
    expect(body.prompt_cache_key).toBe('conv-1')
    expect(headers.get(HEADER)).toBe('metadata, service_tier')
  })

  test("Codex CLI's request body: prompt_cache_key reaches OpenAI, only include is named", async () => {
    const { body, headers } = await bed.exchange('oa', 'responses', 'oa/gpt-4o-mini', {
      instructions: 'You are a coding agent.',
      input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi' }] }],
      tools: [],
      tool_choice: 'auto',
      parallel_tool_calls: false,
      reasoning: { effort: 'medium', summary: 'auto' },
      store: false,
      stream: true,
      include: ['reasoning.encrypted_content'],
      prompt_cache_key: '0199a213-81c0-7800-8aa1-bbab2a035a53',
      text: { verbosity: 'medium' },
    })
    expect(body.prompt_cache_key).toBe('0199a213-81c0-7800-8aa1-bbab2a035a53')
    expect(body).not.toHaveProperty('include')
    expect(headers.get(HEADER)).toBe('include')
  })
})

describe('anthropic and gemini: not forwarded, named once', () => {
  const ROUTES = [
    ['an', 'an/text'],
    ['gm', 'gm/text'],
  ] as const

  test.each([
    ['prompt_cache_key', 'conv-1'],
    ['prompt_cache_retention', '24h'],
    ['prompt_cache_options', { mode: 'explicit' }],
    ['service_tier', 'flex'],
  ])('%s', async (field, value) => {
    for (const [upstream, model] of ROUTES) {
      const { body, headers } = await bed.exchange(upstream, 'responses', model, { [field]: value })
      expect(JSON.stringify(body)).not.toContain(`"${field}"`)
      expect(`${model}: ${headers.get(HEADER)}`).toBe(`${model}: ${field}`)
    }
  })

  test('gemini: safety_identifier and user both named, neither sent', async () => {
    const { body, headers } = await bed.exchange('gm', 'responses', 'gm/text', {
      user: 'u-1',
      safety_identifier: 's-1',
    })
    expect(JSON.stringify(body)).not.toContain('u-1')
    expect(JSON.stringify(body)).not.toContain('s-1')
    expect(headers.get(HEADER)).toBe('user, safety_identifier')
  })

  test('anthropic: safety_identifier wins metadata.user_id over user, nothing named', async () => {
    const { body, headers } = await bed.exchange('an', 'responses', 'an/text', {
      user: 'u-1',
      safety_identifier: 's-1',
    })
    expect(body.metadata).toEqual({ user_id: 's-1' })
    expect(headers.get(HEADER)).toBeNull()
  })

  test("Codex CLI's request body to anthropic: include and prompt_cache_key named", async () => {
    const { body, headers } = await bed.exchange('an', 'responses', 'an/text', {
      instructions: 'You are a coding agent.',
      stream: true,
      store: false,
      include: ['reasoning.encrypted_content'],
      prompt_cache_key: '0199a213-81c0-7800-8aa1-bbab2a035a53',
    })
    expect(JSON.stringify(body)).not.toContain('0199a213')
    expect(headers.get(HEADER)).toBe('include, prompt_cache_key')
  })
})
