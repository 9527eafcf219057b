import { describe, expect, test } from 'bun:test'
import { lostInTranslation } from '../../../src/surfaces/messages/lost-in-translation.ts'
import type { MessagesRequest } from '../../../src/surfaces/messages/request-schema.ts'

const base = {
  model: 'anthropic/claude',
  max_tokens: 1024,
  messages: [{ role: 'user', content: 'Hi' }],
} as MessagesRequest
const none = new Headers({ 'anthropic-version': '2023-06-01' })
const lost = (extra: Record<string, unknown>, headers = none) =>
  lostInTranslation({ ...base, ...extra } as MessagesRequest, headers)

describe('lostInTranslation', () => {
  test('a request the chat form carries whole loses nothing', () => {
    expect(
      lost({
        system: [{ type: 'text', text: 'Be brief.' }],
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
          { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'w', input: {} }] },
          {
            role: 'user',
            content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: '20 C' }] }],
          },
        ],
        tools: [{ name: 'w', description: 'weather', input_schema: { type: 'object' } }],
        tool_choice: { type: 'auto', disable_parallel_tool_use: true },
        thinking: { type: 'disabled' },
        metadata: { user_id: 'u1' },
        stop_sequences: ['END'],
        temperature: 0.5,
        top_p: 0.9,
        stream: true,
      }),
    ).toBeNull()
  })

  test.each([
    ['the anthropic-beta header', {}, new Headers({ 'anthropic-beta': 'context-1m-2025-08-07' })],
    ['thinking', { thinking: { type: 'enabled', budget_tokens: 2048 } }, none],
    ['thinking', { thinking: { type: 'adaptive' } }, none],
    ['top_k', { top_k: 5 }, none],
    ['context_management', { context_management: { edits: [] } }, none],
    [
      'system[0].cache_control',
      { system: [{ type: 'text', text: 'S', cache_control: { type: 'ephemeral' } }] },
      none,
    ],
    [
      'messages[0].content[0].cache_control',
      {
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Hi', cache_control: { type: 'ephemeral' } }] },
        ],
      },
      none,
    ],
    [
      'messages[1].content[0] (thinking)',
      {
        messages: [
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: [{ type: 'thinking', thinking: 'Hm.', signature: 'c2ln' }] },
          { role: 'user', content: 'Go on' },
        ],
      },
      none,
    ],
    [
      'messages[0].content[0].content[0].cache_control',
      {
        messages: [
          {
            role: 'user',
            content: [
              {
                type: 'tool_result',
                tool_use_id: 't1',
                content: [{ type: 'text', text: 'x', cache_control: { type: 'ephemeral' } }],
              },
            ],
          },
        ],
      },
      none,
    ],
    [
      'tools[0].cache_control',
      { tools: [{ name: 'w', input_schema: {}, cache_control: { type: 'ephemeral' } }] },
      none,
    ],
    ['tools[0].type', { tools: [{ name: 'web_search', type: 'web_search_20250305' }] }, none],
  ] as const)('%s is named', (what, extra, headers) => {
    expect(lost(extra, headers as Headers)).toBe(what)
  })

  test('a custom tool declared as such loses nothing', () => {
    expect(lost({ tools: [{ name: 'w', type: 'custom', input_schema: {} }] })).toBeNull()
  })
})
