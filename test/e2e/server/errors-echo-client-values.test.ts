/**
 * Refusals on translated routes that quote a value the client sent quoted it whole: Gemini's
 * `invalid_tool_call_id` repeated the `tool_call_id`, and so did the refusals naming an unknown
 * `reasoning_effort`, a Messages block, document source or server tool type, a Responses item,
 * tool choice or hosted tool type, a function name declared twice — however long, and a key
 * pasted into one came back past its display prefix wherever the cut fell. The tool_choice
 * refusal cut at 64 characters before masking. Every one now goes through `clip()`: keys masked,
 * then cut. A value of 2,000 characters with a Switchyard key 34 or 70 characters in, through each field
 * (a document block's source type too, not sent here: this bed's models lack vision, checked first).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type Surface, startTranslationBed, type TranslationBed } from '../../support/translation-bed.ts'

let bed: TranslationBed
let pasted: string
beforeAll(async () => {
  bed = await startTranslationBed()
  pasted = (await bed.gw.key('bystander', 'unlimited')).key
})
afterAll(() => bed.stop())

/** Whether `text` gives away more of `key` than its display prefix: any 8 characters past it. */
function leaks(text: string, key: string): string | null {
  const secret = key.slice(12).toLowerCase()
  const t = text.toLowerCase()
  for (let i = 0; i + 8 <= secret.length; i++) {
    if (t.includes(secret.slice(i, i + 8))) return secret.slice(i, i + 8)
  }
  return null
}

const fn = (name: string) => ({ type: 'function', function: { name, parameters: { type: 'object' } } })
const rfn = (name: string) => ({ type: 'function', name, parameters: { type: 'object' } })

/** Each field that is quoted: the surface, the model, and the request fields carrying `v`. */
const CASES: Array<[string, Surface, string, (v: string) => Record<string, unknown>]> = [
  [
    'chat → gemini: tool_call_id (invalid_tool_call_id)',
    'chat',
    'gm/text',
    (v) => ({
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'tool', tool_call_id: v, content: 'sunny' },
      ],
    }),
  ],
  ['chat → anthropic: reasoning_effort', 'chat', 'an/text', (v) => ({ reasoning_effort: v })],
  [
    'chat: tool_choice naming a tool not sent',
    'chat',
    'an/text',
    (v) => ({ tools: [fn('get_weather')], tool_choice: { type: 'function', function: { name: v } } }),
  ],
  [
    'messages → gemini: a block type only Anthropic reads',
    'messages',
    'gm/text',
    (v) => ({ messages: [{ role: 'user', content: [{ type: v }] }] }),
  ],
  [
    'messages → gemini: a server tool type',
    'messages',
    'gm/text',
    (v) => ({ tools: [{ type: v, name: 'web_search' }] }),
  ],
  ['responses → gemini: an input item type', 'responses', 'gm/text', (v) => ({ input: [{ type: v }] })],
  [
    'responses: a tool_choice type without tools',
    'responses',
    'gm/text',
    (v) => ({ tool_choice: { type: v } }),
  ],
  [
    'responses → gemini: a tool_choice type beside tools',
    'responses',
    'gm/text',
    (v) => ({ tools: [rfn('get_weather')], tool_choice: { type: v } }),
  ],
  ['responses → gemini: a hosted tool type', 'responses', 'gm/text', (v) => ({ tools: [{ type: v }] })],
]

async function refusal(surface: Surface, model: string, extra: Record<string, unknown>): Promise<string> {
  const res = await bed.post(surface, model, extra)
  const body = (await res.json()) as any
  expect(`${res.status} ${JSON.stringify(body).slice(0, 300)}`).toStartWith('400 ')
  return body.error.message
}

describe('a refusal quotes a client value masked, then cut', () => {
  // The key across a cut at 64 characters (the tool_choice quote's), then across one at 100.
  test.each(CASES)('%s', async (_name, surface, model, extra) => {
    for (const pad of [17, 35]) {
      // Words, so that no run of it looks like a secret to any other mask.
      const message = await refusal(
        surface,
        model,
        extra(`${'x '.repeat(pad)}${pasted} ${'y '.repeat(1000)}`),
      )
      expect(message).toContain('x x x x x x x x')
      expect(leaks(message, pasted)).toBeNull()
      expect(message.length).toBeLessThan(600)
    }
  })
})
