/**
 * `tool_choice` without `tools`. The bug: the gateway passed it on, so OpenAI answered its own 400
 * ("'tool_choice' is only allowed when 'tools' are specified") and Anthropic its own ("tool_choice
 * may only be specified while providing tools"), after admission; translated routes dropped it, or
 * sent a `"none"` the OpenAI upstream refuses. Each surface now holds its provider's own rule, no
 * stricter:
 * - chat (OpenAI): any `tool_choice`, `"none"` included, needs `tools`;
 * - Messages (Anthropic): `auto`, `any` and `tool` need `tools`; `none` is the default without them;
 * - Responses (OpenAI): `"required"` and a named tool need `tools`; `"auto"` and `"none"` do not.
 * Refused with 400 naming `tool_choice` before any upstream is called; what the provider accepts
 * reaches each upstream in a form it accepts.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTranslationBed, type TranslationBed } from '../../support/translation-bed.ts'

let bed: TranslationBed
beforeAll(async () => {
  bed = await startTranslationBed()
})
afterAll(() => bed.stop())

const NAMED_CHAT = { type: 'function', function: { name: 'f' } }
const WEATHER_TOOL = { type: 'function', name: 'get_weather', parameters: { type: 'object', properties: {} } }

describe('chat: tool_choice without tools → 400 naming tool_choice, nothing sent', () => {
  test.each([
    ['oa/gpt-4o-mini', 'none'],
    ['oa/gpt-4o-mini', 'auto'],
    ['oa/gpt-4o-mini', 'required'],
    ['oa/gpt-4o-mini', NAMED_CHAT],
    ['an/text', 'required'],
    ['gm/text', NAMED_CHAT],
  ] as const)('%s tool_choice %j', async (id, choice) => {
    const body = await bed.refused('chat', id, { tool_choice: choice }, 'tool_choice')
    expect(body.error.code).toBe('invalid_value')
    expect(body.error.message).toContain('tools')
  })
})

describe('messages: tool_choice auto, any or tool without tools → 400, nothing sent', () => {
  test.each([
    ['an/text', { type: 'auto' }],
    ['an/text', { type: 'any' }],
    ['an/text', { type: 'tool', name: 'f' }],
    ['oa/gpt-4o-mini', { type: 'any' }],
    ['gm/text', { type: 'tool', name: 'f' }],
  ])('%s tool_choice %j', async (id, choice) => {
    await bed.refused('messages', id, { tool_choice: choice }, 'tool_choice')
  })

  test('tools: [] is no tools', async () => {
    await bed.refused('messages', 'an/text', { tools: [], tool_choice: { type: 'any' } }, 'tool_choice')
  })

  test('tool_choice none without tools passes through to Anthropic as sent', async () => {
    const body = await bed.sent('an', 'messages', 'an/text', { tool_choice: { type: 'none' } })
    expect(body.tool_choice).toEqual({ type: 'none' })
  })

  test('translated, tool_choice none without tools sends no tool_choice (OpenAI refuses one)', async () => {
    const body = await bed.sent('oa', 'messages', 'oa/gpt-4o-mini', { tool_choice: { type: 'none' } })
    expect(body.tool_choice).toBeUndefined()
    expect(body.tools).toBeUndefined()
  })
})

describe('responses: required or a named tool without tools → 400, nothing sent', () => {
  test.each([
    ['oair/text', 'required'],
    ['oair/text', { type: 'function', name: 'f' }],
    ['oa/gpt-4o-mini', 'required'],
    ['an/text', { type: 'function', name: 'f' }],
  ] as const)('%s tool_choice %j', async (id, choice) => {
    await bed.refused('responses', id, { tool_choice: choice }, 'tool_choice')
  })

  test('tools: [] is no tools', async () => {
    await bed.refused('responses', 'oa/gpt-4o-mini', { tools: [], tool_choice: 'required' }, 'tool_choice')
  })

  test.each(['auto', 'none'])('tool_choice %s without tools passes through as sent', async (choice) => {
    const body = await bed.sent('oair', 'responses', 'oair/text', { tool_choice: choice })
    expect(body.tool_choice).toBe(choice)
  })

  test.each(['auto', 'none'])(
    'translated, tool_choice %s without tools sends no tool_choice (OpenAI chat refuses one)',
    async (choice) => {
      const body = await bed.sent('oa', 'responses', 'oa/gpt-4o-mini', { tool_choice: choice })
      expect(body.tool_choice).toBeUndefined()
    },
  )

  test('with tools, the choice still reaches a translated upstream', async () => {
    const body = await bed.sent('oa', 'responses', 'oa/gpt-4o-mini', {
      tools: [WEATHER_TOOL],
      tool_choice: 'required',
    })
    expect(body.tool_choice).toBe('required')
  })

  test.each(['required', { type: 'function', name: 'f' }])(
    'tool_choice %j when every tool was a hosted one the route dropped → 400, nothing sent',
    async (choice) => {
      await bed.refused(
        'responses',
        'oa/drop',
        { tools: [{ type: 'web_search' }], tool_choice: choice },
        'tool_choice',
      )
    },
  )
})
