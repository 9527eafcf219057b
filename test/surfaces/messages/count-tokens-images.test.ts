/**
 * count_tokens on a model the gateway counts itself (openai, gemini, demo): images count — they
 * counted nothing, in a message or in a tool result, so a conversation of screenshots read as its
 * text alone (and less than the gateway reserves for the same request).
 */
import { expect, test } from 'bun:test'
import { IMAGE_ESTIMATE } from '../../../src/surfaces/count-tokens.ts'
import { estimateTokens } from '../../../src/surfaces/messages/count-tokens.ts'

const PNG = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } }

test('each image adds its estimate, in a message and in a tool result', async () => {
  const text = await estimateTokens({
    model: 'm',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
  } as never)
  const three = await estimateTokens({
    model: 'm',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }, PNG, PNG, PNG] }],
  } as never)
  expect(three - text).toBe(3 * IMAGE_ESTIMATE)
  const inResult = await estimateTokens({
    model: 'm',
    messages: [
      { role: 'user', content: 'look' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'shot', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [PNG] }] },
    ],
  } as never)
  expect(inResult).toBeGreaterThanOrEqual(IMAGE_ESTIMATE)
})
