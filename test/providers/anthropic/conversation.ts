/** An OpenAI conversation using every translated feature, and the exact Anthropic body it becomes. */
import type { ChatRequest } from '../../../src/operations/chat.ts'

export const WEATHER = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Current weather for a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
}
const CLOCK = { type: 'function' as const, function: { name: 'get_time' } }

/** A conversation using every translated feature at once. */
export const CONVERSATION: ChatRequest = {
  model: 'claude-sonnet-4-5',
  max_tokens: 1024,
  temperature: 0.3,
  top_p: 0.9,
  stop: ['END', 'STOP'],
  user: 'user-42',
  tools: [WEATHER, CLOCK],
  tool_choice: 'required',
  parallel_tool_calls: false,
  messages: [
    { role: 'system', content: 'You are terse.' },
    { role: 'developer', content: [{ type: 'text', text: 'Use metric units.' }] },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'What is in these pictures, and how is the weather in Paris and London?' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
        { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg', detail: 'high' } },
      ],
    },
    {
      role: 'assistant',
      content: 'A cat. Let me check the weather.',
      tool_calls: [
        { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        {
          id: 'toolu_2',
          type: 'function',
          function: { name: 'get_weather', arguments: '{"city":"London"}' },
        },
      ],
    },
    { role: 'tool', tool_call_id: 'toolu_1', content: '18°C, sunny' },
    { role: 'tool', tool_call_id: 'toolu_2', content: [{ type: 'text', text: '12°C, rain' }] },
    { role: 'user', content: 'Which is warmer?' },
  ],
}

export const CONVERSATION_BODY = {
  model: 'claude-sonnet-4-5',
  max_tokens: 1024,
  system: [
    { type: 'text', text: 'You are terse.' },
    { type: 'text', text: 'Use metric units.' },
  ],
  messages: [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'What is in these pictures, and how is the weather in Paris and London?' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
        { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
      ],
    },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'A cat. Let me check the weather.' },
        { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
        { type: 'tool_use', id: 'toolu_2', name: 'get_weather', input: { city: 'London' } },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_1', content: '18°C, sunny' },
        { type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: '12°C, rain' }] },
        { type: 'text', text: 'Which is warmer?' },
      ],
    },
  ],
  tools: [
    {
      name: 'get_weather',
      description: 'Current weather for a city',
      input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
    { name: 'get_time', input_schema: { type: 'object', properties: {} } },
  ],
  tool_choice: { type: 'any', disable_parallel_tool_use: true },
  temperature: 0.3,
  top_p: 0.9,
  stop_sequences: ['END', 'STOP'],
  metadata: { user_id: 'user-42' },
}
