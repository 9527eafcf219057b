/**
 * Chat Completions parameters on translated routes (anthropic, gemini). The bug: every parameter
 * the adapters did not read was dropped in silence — `seed`, penalties and `logit_bias` to
 * Anthropic, `user`, `metadata`, `store`, `service_tier`, `verbosity`, `prediction`,
 * `safety_identifier`, the prompt-cache hints everywhere. Now each field of OpenAI's
 * `CreateChatCompletionRequest` (shared/reference/openai-chat-schemas.json) is translated where the
 * provider has it; refused with 400 `unsupported_parameter` naming it where it changes the answer
 * and the provider has no counterpart; else left out and named in `x-switchyard-dropped-params`
 * (README "Chat parameters on translated routes"). A value equal to OpenAI's own default asks for
 * nothing and is neither refused nor named.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTranslationBed, type TranslationBed } from '../../support/translation-bed.ts'

const DROPPED = 'x-switchyard-dropped-params'

let bed: TranslationBed
beforeAll(async () => {
  bed = await startTranslationBed()
})
afterAll(() => bed.stop())

describe('translated where the provider has a counterpart', () => {
  test('anthropic: stop → stop_sequences, top_k, safety_identifier → metadata.user_id', async () => {
    const { body, headers } = await bed.exchange('an', 'chat', 'an/text', {
      stop: 'END',
      top_k: 40,
      safety_identifier: 'user-hash-1',
    })
    expect(body.stop_sequences).toEqual(['END'])
    expect(body.top_k).toBe(40)
    expect(body.metadata).toEqual({ user_id: 'user-hash-1' })
    expect(headers.get(DROPPED)).toBeNull()
  })

  test('anthropic: user → metadata.user_id', async () => {
    const body = await bed.sent('an', 'chat', 'an/text', { user: 'u-1' })
    expect(body.metadata).toEqual({ user_id: 'u-1' })
  })

  test('gemini: stop, seed, penalties and top_k → generationConfig', async () => {
    const { body, headers } = await bed.exchange('gm', 'chat', 'gm/text', {
      stop: ['END', 'STOP'],
      seed: 7,
      presence_penalty: 0.5,
      frequency_penalty: -0.25,
      top_k: 40,
    })
    expect(body.generationConfig).toMatchObject({
      stopSequences: ['END', 'STOP'],
      seed: 7,
      presencePenalty: 0.5,
      frequencyPenalty: -0.25,
      topK: 40,
    })
    expect(headers.get(DROPPED)).toBeNull()
  })
})

describe('sampling controls the provider lacks → 400 unsupported_parameter naming them, nothing sent', () => {
  test.each([
    ['an/text', 'presence_penalty', 0.5],
    ['an/text', 'frequency_penalty', 1],
    ['an/text', 'logit_bias', { '50256': -100 }],
    ['gm/text', 'logit_bias', { '50256': -100 }],
  ])('%s %s', async (id, field, value) => {
    const body = await bed.refused('chat', id, { [field]: value }, field)
    expect(body.error.code).toBe('unsupported_parameter')
  })

  test('an openai upstream takes them as sent', async () => {
    const body = await bed.sent('oa', 'chat', 'oa/gpt-4o-mini', { presence_penalty: 0.5 })
    expect(body.presence_penalty).toBe(0.5)
  })
})

/**
 * A key named as one of Object.prototype's (`__proto__`, `constructor`, `__defineGetter__`,
 * `hasOwnProperty`) is a key the client sent, like any other: it was looked up in the declaration
 * tables through the prototype chain, so `__proto__` and `__defineGetter__` answered 500 (the
 * inherited value was called), `hasOwnProperty` was refused quoting native code, and
 * `constructor` passed as one of OpenAI's defaults, neither sent nor named.
 */
describe('keys named like Object.prototype members are unknown keys', () => {
  const PROTO_KEYS = ['__proto__', 'constructor', '__defineGetter__', 'hasOwnProperty', 'toString']
  const raw = (surface: 'chat' | 'responses', model: string, key: string) =>
    surface === 'chat'
      ? `{"model":"${model}","messages":[{"role":"user","content":"Hi"}],"${key}":1}`
      : `{"model":"${model}","input":"Hi","${key}":1}`

  test.each([
    ['chat', 'an/text'],
    ['chat', 'gm/text'],
    ['responses', 'an/text'],
    ['responses', 'gm/text'],
  ] as const)('%s %s: left out and named, never a 500', async (surface, model) => {
    const key = (await bed.gw.key(`proto-${surface}-${model.replace('/', '-')}`, 'unlimited')).key
    for (const name of PROTO_KEYS) {
      const res = await fetch(`${bed.gw.url}/v1/${surface === 'chat' ? 'chat/completions' : 'responses'}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: raw(surface, model, name),
      })
      const text = await res.text()
      expect(`${name} ${res.status} ${text.slice(0, 200)}`).toStartWith(`${name} 200 `)
      expect(res.headers.get(DROPPED)).toBe(name)
    }
  })
})

describe('what changes nothing the model writes → left out and named in x-switchyard-dropped-params', () => {
  const BOOKKEEPING = {
    seed: 7,
    verbosity: 'low',
    service_tier: 'flex',
    metadata: { job: '7' },
    store: true,
    prediction: { type: 'content', content: 'Hello' },
    prompt_cache_key: 'k-1',
    prompt_cache_retention: '24h',
    min_p: 0.1,
  }

  test('anthropic', async () => {
    const { body, headers } = await bed.exchange('an', 'chat', 'an/text', BOOKKEEPING)
    expect(headers.get(DROPPED)).toBe(
      'seed, verbosity, service_tier, metadata, store, prediction, prompt_cache_key, prompt_cache_retention, min_p',
    )
    for (const field of Object.keys(BOOKKEEPING)) expect(body[field]).toBeUndefined()
  })

  test('gemini: also user, safety_identifier and parallel_tool_calls false', async () => {
    const { seed: _, ...rest } = BOOKKEEPING
    const { body, headers } = await bed.exchange('gm', 'chat', 'gm/text', {
      ...rest,
      user: 'u-1',
      safety_identifier: 's-1',
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
      parallel_tool_calls: false,
    })
    expect(headers.get(DROPPED)).toBe(
      'verbosity, service_tier, metadata, store, prediction, prompt_cache_key, prompt_cache_retention, min_p, user, safety_identifier, parallel_tool_calls',
    )
    expect(JSON.stringify(body)).not.toContain('u-1')
  })

  test('OpenAI’s own defaults ask for nothing: not refused, not named', async () => {
    const defaults = {
      n: 1,
      presence_penalty: 0,
      frequency_penalty: 0,
      logit_bias: {},
      logprobs: false,
      store: false,
      service_tier: 'auto',
      verbosity: 'medium',
      modalities: ['text'],
      metadata: {},
    }
    for (const [upstream, id] of [
      ['an', 'an/text'],
      ['gm', 'gm/text'],
    ] as const) {
      const { headers } = await bed.exchange(upstream, 'chat', id, defaults)
      expect(headers.get(DROPPED)).toBeNull()
    }
  })

  test('an openai upstream gets them as sent, and nothing is named', async () => {
    const { body, headers } = await bed.exchange('oa', 'chat', 'oa/gpt-4o-mini', BOOKKEEPING)
    expect(body.prompt_cache_key).toBe('k-1')
    expect(headers.get(DROPPED)).toBeNull()
  })

  test('named in the surface’s terms: Messages metadata.user_id to gemini', async () => {
    const { headers } = await bed.exchange('gm', 'messages', 'gm/text', { metadata: { user_id: 'u-1' } })
    expect(headers.get(DROPPED)).toBe('metadata.user_id')
  })

  test('named in the surface’s terms: Responses text.verbosity and safety_identifier to gemini', async () => {
    const { headers } = await bed.exchange('gm', 'responses', 'gm/text', {
      text: { verbosity: 'low' },
      safety_identifier: 's-1',
    })
    expect(headers.get(DROPPED)).toBe('text.verbosity, safety_identifier')
  })

  test('Responses safety_identifier reaches anthropic as metadata.user_id', async () => {
    const { body, headers } = await bed.exchange('an', 'responses', 'an/text', { safety_identifier: 's-1' })
    expect(body.metadata).toEqual({ user_id: 's-1' })
    expect(headers.get(DROPPED)).toBeNull()
  })
})

/**
 * Reasoning asked of an Anthropic model while the history ends in a tool loop goes without
 * thinking (Anthropic wants that turn to begin with the signed thinking block a translated history
 * cannot carry): left out, so named in the header like any other drop; the turn after the loop
 * thinks again, with nothing named.
 */
describe('anthropic: reasoning in a tool loop is left out and named', () => {
  const TOOL = { type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } }
  const loop = [
    { role: 'user', content: 'Hi' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
    },
    { role: 'tool', tool_call_id: 'c1', content: 'ok' },
  ]
  test('chat: reasoning_effort', async () => {
    const ask = { reasoning_effort: 'high', max_completion_tokens: 8000, tools: [TOOL] }
    const inLoop = await bed.exchange('an', 'chat', 'an/text', { ...ask, messages: loop })
    expect(inLoop.body.thinking).toBeUndefined()
    expect(inLoop.headers.get(DROPPED)).toBe('reasoning_effort')
    const after = await bed.exchange('an', 'chat', 'an/text', {
      ...ask,
      messages: [...loop, { role: 'assistant', content: 'done' }, { role: 'user', content: 'again' }],
    })
    expect(after.body.thinking).toMatchObject({ type: 'enabled' })
    expect(after.headers.get(DROPPED)).toBeNull()
  })
  test('responses: reasoning.effort', async () => {
    const { body, headers } = await bed.exchange('an', 'responses', 'an/text', {
      reasoning: { effort: 'high' },
      max_output_tokens: 8000,
      tools: [{ type: 'function', name: 'f', parameters: { type: 'object', properties: {} } }],
      input: [
        { type: 'message', role: 'user', content: 'Hi' },
        { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c1', output: 'ok' },
      ],
    })
    expect(body.thinking).toBeUndefined()
    expect(headers.get(DROPPED)).toBe('reasoning.effort')
  })
})
