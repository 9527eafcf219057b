/**
 * A named `tool_choice` for a function that is not among `tools`. The bug: the gateway admitted the
 * request and passed it on, so OpenAI and Anthropic refused it upstream (after admission: the
 * request counted against the limits) and Gemini was sent `allowedFunctionNames` naming a function
 * it was never declared. Now every surface refuses it, on every route, with 400 `invalid_value`
 * naming `tool_choice` before any upstream is called; a choice that names one of the tools still
 * reaches each upstream.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTranslationBed, type TranslationBed } from '../../support/translation-bed.ts'

let bed: TranslationBed
beforeAll(async () => {
  bed = await startTranslationBed()
})
afterAll(() => bed.stop())

const PARAMS = { type: 'object', properties: {} }
const CHAT_TOOLS = [{ type: 'function', function: { name: 'get_weather', parameters: PARAMS } }]
const MESSAGES_TOOLS = [{ name: 'get_weather', input_schema: PARAMS }]
const RESPONSES_TOOLS = [{ type: 'function', name: 'get_weather', parameters: PARAMS }]
const ALL = ['oa/gpt-4o-mini', 'an/text', 'gm/text']

describe('a named tool_choice for a function not among tools → 400 naming tool_choice, nothing sent', () => {
  test.each(ALL)('chat to %s', async (id) => {
    const body = await bed.refused(
      'chat',
      id,
      { tools: CHAT_TOOLS, tool_choice: { type: 'function', function: { name: 'get_time' } } },
      'tool_choice',
    )
    expect(body.error.code).toBe('invalid_value')
    expect(body.error.message).toContain('"get_time"')
    expect(body.error.message).toContain('get_weather')
  })

  test.each(ALL)('messages to %s', async (id) => {
    const body = await bed.refused(
      'messages',
      id,
      { tools: MESSAGES_TOOLS, tool_choice: { type: 'tool', name: 'get_time' } },
      'tool_choice',
    )
    expect(body.error.message).toContain('"get_time"')
  })

  test.each([...ALL, 'oair/text'])('responses to %s', async (id) => {
    const body = await bed.refused(
      'responses',
      id,
      { tools: RESPONSES_TOOLS, tool_choice: { type: 'function', name: 'get_time' } },
      'tool_choice',
    )
    expect(body.error.code).toBe('invalid_value')
    expect(body.error.message).toContain('"get_time"')
  })
})

describe('a named tool_choice for one of the tools still reaches the upstream', () => {
  test('chat to gemini: allowedFunctionNames', async () => {
    const body = await bed.sent('gm', 'chat', 'gm/text', {
      tools: CHAT_TOOLS,
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
    })
    expect(body.toolConfig.functionCallingConfig).toEqual({
      mode: 'ANY',
      allowedFunctionNames: ['get_weather'],
    })
  })

  test('messages to anthropic (pass-through)', async () => {
    const body = await bed.sent('an', 'messages', 'an/text', {
      tools: MESSAGES_TOOLS,
      tool_choice: { type: 'tool', name: 'get_weather' },
    })
    expect(body.tool_choice).toEqual({ type: 'tool', name: 'get_weather' })
  })

  test('responses: a function declared in a namespace may be named', async () => {
    const body = await bed.sent('oa', 'responses', 'oa/gpt-4o-mini', {
      tools: [{ type: 'namespace', name: 'ns', description: 'd', tools: RESPONSES_TOOLS }],
      tool_choice: { type: 'function', name: 'get_weather' },
    })
    expect(body.tool_choice).toEqual({ type: 'function', function: { name: 'get_weather' } })
  })
})
