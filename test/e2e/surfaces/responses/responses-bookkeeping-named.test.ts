/**
 * Responses bookkeeping fields on translated routes. The bug: `service_tier`, the prompt-cache
 * hints, `metadata`, `truncation`, `context_management`, `max_tool_calls` and `include` were left
 * out of the chat request without a word, while the chat surface names what it leaves out in
 * `x-switchyard-dropped-params` (and Responses' unknown top-level fields were named). Now they are
 * named the same way — a value equal to OpenAI's default asks for nothing and is not — the response
 * object still echoes `metadata` and `service_tier`, and a pass-through route names nothing.
 * Codex CLI sends `include` and `prompt_cache_key` on every turn; the AI SDK sends them when told.
 * An openai chat upstream takes `service_tier` and the prompt-cache hints as sent, and they are not
 * named there (responses-openai-chat-forwarded.test.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import OpenAI from 'openai'
import { startTranslationBed, type TranslationBed } from '../../../support/translation-bed.ts'

const HEADER = 'x-switchyard-dropped-params'
const CLIENTS = join(import.meta.dir, '../../../clients')
let bed: TranslationBed
let key: string
beforeAll(async () => {
  bed = await startTranslationBed()
  key = (await bed.gw.key('bookkeeping', 'unlimited')).key
})
afterAll(() => bed.stop())

const ROUTES = [
  ['an', 'an/text'],
  ['gm', 'gm/text'],
  ['oa', 'oa/gpt-4o-mini'],
] as const

/** What an openai chat upstream takes as sent (responses-openai-chat-forwarded.test.ts): named elsewhere. */
const OPENAI_CHAT_TAKES = new Set([
  'service_tier',
  'prompt_cache_key',
  'prompt_cache_retention',
  'prompt_cache_options',
])

describe('left out of the chat request and named', () => {
  test.each([
    ['service_tier', 'flex'],
    ['prompt_cache_key', 'conv-1'],
    ['prompt_cache_retention', '24h'],
    ['prompt_cache_options', { mode: 'explicit' }],
    ['metadata', { job: '7' }],
    ['truncation', 'auto'],
    ['context_management', [{ type: 'compaction', compact_threshold: 200000 }]],
    ['max_tool_calls', 2],
    ['include', ['reasoning.encrypted_content']],
  ])('%s', async (field, value) => {
    for (const [upstream, model] of ROUTES) {
      if (upstream === 'oa' && OPENAI_CHAT_TAKES.has(field)) continue
      const { body, headers } = await bed.exchange(upstream, 'responses', model, { [field]: value })
      expect(JSON.stringify(body)).not.toContain(`"${field}"`)
      expect(`${model}: ${headers.get(HEADER)}`).toBe(`${model}: ${field}`)
    }
  })

  test('with unknown fields, in request order', async () => {
    const { headers } = await bed.exchange('gm', 'responses', 'gm/text', {
      top_k: 40,
      service_tier: 'priority',
      prompt_cache_key: 'conv-1',
    })
    expect(headers.get(HEADER)).toBe('top_k, service_tier, prompt_cache_key')
  })
})

test("OpenAI's defaults (and store, which a stateless gateway honours either way) are not named", async () => {
  for (const [upstream, model] of ROUTES) {
    const { headers } = await bed.exchange(upstream, 'responses', model, {
      service_tier: 'auto',
      truncation: 'disabled',
      metadata: {},
      include: [],
      prompt_cache_retention: 'in_memory',
      prompt_cache_options: {},
      context_management: null,
      max_tool_calls: null,
      store: true,
      background: false,
      stream: true,
      // The only option: obfuscation, which a translated stream never adds (false is served).
      stream_options: { include_obfuscation: false },
    })
    expect(`${model}: ${headers.get(HEADER)}`).toBe(`${model}: null`)
  }
})

test('pass-through to a Responses upstream: sent as it came, nothing named', async () => {
  const { body, headers } = await bed.exchange('oair', 'responses', 'oair/text', {
    service_tier: 'flex',
    prompt_cache_key: 'conv-1',
    include: ['reasoning.encrypted_content'],
  })
  expect(body.service_tier).toBe('flex')
  expect(body.prompt_cache_key).toBe('conv-1')
  expect(headers.get(HEADER)).toBeNull()
})

test("Codex CLI's request body: include and prompt_cache_key named, the answer streams as ever", async () => {
  const res = await bed.post('responses', 'an/text', {
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
  expect(res.status).toBe(200)
  expect(await res.text()).toContain('response.completed')
  expect(res.headers.get(HEADER)).toBe('include, prompt_cache_key')
})

test('the OpenAI SDK reads the header, and the response still echoes metadata and service_tier', async () => {
  const client = new OpenAI({ apiKey: key, baseURL: `${bed.gw.url}/v1`, maxRetries: 0 })
  const { data, response } = await client.responses
    .create({ model: 'gm/text', input: 'Hi', metadata: { job: '7' }, service_tier: 'flex' })
    .withResponse()
  expect(response.headers.get(HEADER)).toBe('metadata, service_tier')
  expect(data.metadata).toEqual({ job: '7' })
  // The tier that served the request, as OpenAI reports it: the upstream's own, never flex.
  expect(data.service_tier).toBe('default')
})

test('the AI SDK: provider options it sends as bookkeeping are named', async () => {
  let ai: any
  let provider: any
  try {
    ai = await import(Bun.resolveSync('ai', CLIENTS))
    provider = await import(Bun.resolveSync('@ai-sdk/openai', CLIENTS))
  } catch {
    console.log('SKIPPED (AI SDK part): test/clients not installed (npm install --prefix test/clients)')
    return
  }
  const openai = provider.createOpenAI({ baseURL: `${bed.gw.url}/v1`, apiKey: key })
  const plain = await ai.generateText({ model: openai.responses('an/text'), prompt: 'Hi', maxRetries: 0 })
  expect(plain.response.headers[HEADER]).toBeUndefined()
  // (Its `serviceTier` goes only to the OpenAI models it knows take one: not sent here.)
  const result = await ai.generateText({
    model: openai.responses('an/text'),
    prompt: 'Hi',
    maxRetries: 0,
    providerOptions: {
      openai: { store: false, metadata: { job: '7' }, promptCacheKey: 'conv-1' },
    },
  })
  expect(result.text.length).toBeGreaterThan(0)
  expect(result.response.headers[HEADER]).toBe('metadata, prompt_cache_key')
})
