/** An OpenAI conversation using every translated feature, and the exact Gemini body it becomes. */
import type { ChatRequest } from '../../../src/operations/chat.ts'

export const WEATHER = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Current weather for a city',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string' }, unit: { type: ['string', 'null'] } },
      required: ['city', 'unit'],
      additionalProperties: false,
    },
  },
}
const CLOCK = { type: 'function' as const, function: { name: 'get_time' } }

/** A conversation using every translated feature at once. */
export const CONVERSATION: ChatRequest = {
  model: 'gemini-2.5-flash',
  max_tokens: 1024,
  temperature: 0.3,
  top_p: 0.9,
  n: 1,
  stop: ['END', 'STOP'],
  tools: [WEATHER, CLOCK],
  tool_choice: 'required',
  messages: [
    { role: 'system', content: 'You are terse.' },
    { role: 'developer', content: [{ type: 'text', text: 'Use metric units.' }] },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'What is in these pictures, and how is the weather in Paris and London?' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
        {
          type: 'image_url',
          image_url: { url: 'https://example.com/photos/cat.webp?size=large', detail: 'high' },
        },
        { type: 'image_url', image_url: { url: 'https://example.com/render' } },
      ],
    },
    {
      role: 'assistant',
      content: 'A cat. Let me check the weather.',
      tool_calls: [
        {
          id: 'call_1',
          type: 'function',
          function: { name: 'get_weather', arguments: '{"city":"Paris","unit":"c"}' },
        },
        {
          id: 'call_2',
          type: 'function',
          function: { name: 'get_weather', arguments: '{"city":"London","unit":null}' },
        },
      ],
    },
    { role: 'tool', tool_call_id: 'call_1', content: '{"temperature":18,"sky":"sunny"}' },
    { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: '12°C, rain' }] },
    { role: 'user', content: 'Which is warmer?' },
  ],
}

export const CONVERSATION_BODY = {
  systemInstruction: { parts: [{ text: 'You are terse.' }, { text: 'Use metric units.' }] },
  contents: [
    {
      role: 'user',
      parts: [
        { text: 'What is in these pictures, and how is the weather in Paris and London?' },
        { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
        { fileData: { mimeType: 'image/webp', fileUri: 'https://example.com/photos/cat.webp?size=large' } },
        { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/render' } },
      ],
    },
    {
      role: 'model',
      parts: [
        { text: 'A cat. Let me check the weather.' },
        // Ids from elsewhere carry no thought signature: the first call of the step gets Google's bypass value.
        {
          functionCall: { name: 'get_weather', args: { city: 'Paris', unit: 'c' } },
          thoughtSignature: 'skip_thought_signature_validator',
        },
        { functionCall: { name: 'get_weather', args: { city: 'London', unit: null } } },
      ],
    },
    {
      role: 'user',
      parts: [
        {
          functionResponse: { name: 'get_weather', response: { content: { temperature: 18, sky: 'sunny' } } },
        },
        { functionResponse: { name: 'get_weather', response: { content: { result: '12°C, rain' } } } },
        { text: 'Which is warmer?' },
      ],
    },
  ],
  tools: [
    {
      functionDeclarations: [
        {
          name: 'get_weather',
          description: 'Current weather for a city',
          parametersJsonSchema: {
            type: 'object',
            properties: { city: { type: 'string' }, unit: { type: ['string', 'null'] } },
            required: ['city', 'unit'],
            additionalProperties: false,
          },
        },
        { name: 'get_time' },
      ],
    },
  ],
  toolConfig: { functionCallingConfig: { mode: 'ANY' } },
  generationConfig: {
    temperature: 0.3,
    topP: 0.9,
    maxOutputTokens: 1024,
    candidateCount: 1,
    stopSequences: ['END', 'STOP'],
  },
}
