/**
 * The Gemini surface's codecs, without a server: the path's model and method, a Gemini request →
 * the canonical chat request (tool calls paired with their responses, OpenAPI schemas lowered,
 * toolConfig, generationConfig), `thinkingConfig` ↔ `reasoning_effort`, and the stream encoder
 * (tool calls gathered whole, the finish held for the usage, the JSON-array form).
 */
import { describe, expect, test } from 'bun:test'
import type { ChatCompletionChunk } from '../../../src/operations/chat.ts'
import { convertToChatRequest } from '../../../src/surfaces/gemini/convert-to-chat-request.ts'
import { GeminiStreamEncoder } from '../../../src/surfaces/gemini/stream-encoder.ts'
import { reasoningEffortOf } from '../../../src/surfaces/gemini/thinking.ts'
import { geminiTarget } from '../../../src/surfaces/gemini/view.ts'

describe('geminiTarget', () => {
  test('the model holds its slash, plain or %2F-encoded; the method follows the last colon', () => {
    expect(geminiTarget('http://h/v1beta/models/demo/agent:streamGenerateContent?alt=sse')).toEqual({
      model: 'demo/agent',
      method: 'streamGenerateContent',
      sse: true,
    })
    expect(geminiTarget('http://h/v1/models/openai%2Fgpt-4o:generateContent')).toEqual({
      model: 'openai/gpt-4o',
      method: 'generateContent',
      sse: false,
    })
    expect(geminiTarget('http://h/v1beta/models/demo/agent')).toBeNull()
    expect(geminiTarget('http://h/v1beta/models/%ZZ:generateContent')).toBeNull()
  })
})

describe('convertToChatRequest', () => {
  test('a tool round trip: calls become tool_calls, responses tool messages answering them by id or name', () => {
    const req = convertToChatRequest(
      {
        systemInstruction: { parts: [{ text: 'Be brief.' }] },
        contents: [
          { role: 'user', parts: [{ text: 'weather?' }] },
          {
            role: 'model',
            parts: [
              { text: 'thinking…', thought: true },
              { functionCall: { name: 'weather', args: { city: 'Oslo' } } },
              { functionCall: { id: 'c2', name: 'weather', args: { city: 'Rome' } } },
            ],
          },
          {
            role: 'user',
            parts: [
              { functionResponse: { id: 'c2', name: 'weather', response: { t: 20 } } },
              { functionResponse: { name: 'weather', response: { t: 3 } } },
            ],
          },
        ],
        tools: [
          {
            functionDeclarations: [
              { name: 'weather', parameters: { type: 'OBJECT', properties: { city: { type: 'STRING' } } } },
            ],
          },
        ],
        toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['weather'] } },
        generationConfig: { temperature: 0.2, maxOutputTokens: 100, stopSequences: ['x'], candidateCount: 1 },
      },
      'gpt-4o',
    )
    expect(req.messages[0]).toEqual({ role: 'system', content: 'Be brief.' })
    const calls = req.messages[2]!.tool_calls!
    expect(req.messages[2]!.content).toBeNull()
    expect(calls.map((c) => [c.function.name, c.function.arguments])).toEqual([
      ['weather', '{"city":"Oslo"}'],
      ['weather', '{"city":"Rome"}'],
    ])
    expect(calls[1]!.id).toBe('c2')
    // By id first (c2), then the earliest unanswered call of the name.
    expect(req.messages[3]).toEqual({ role: 'tool', tool_call_id: 'c2', content: '{"t":20}' })
    expect(req.messages[4]).toEqual({ role: 'tool', tool_call_id: calls[0]!.id, content: '{"t":3}' })
    expect(req.tools![0]!.function.parameters).toEqual({
      type: 'object',
      properties: { city: { type: 'string' } },
    })
    expect(req.tool_choice).toEqual({ type: 'function', function: { name: 'weather' } })
    expect(req).toMatchObject({ temperature: 0.2, max_tokens: 100, stop: ['x'] })
    expect(req.n).toBeUndefined()
  })

  test('refusals name the Gemini field', () => {
    const answerless = () =>
      convertToChatRequest(
        { contents: [{ role: 'user', parts: [{ functionResponse: { name: 'f', response: {} } }] }] },
        'm',
      )
    expect(answerless).toThrow(/contents\[0\]\.parts\[0\]\.functionResponse/)
    const search = () =>
      convertToChatRequest(
        { contents: [{ parts: [{ text: 'x' }] }], tools: [{ googleSearch: {} } as never] },
        'm',
      )
    expect(search).toThrow(/tools\[0\]\.googleSearch/)
  })
})

describe('thinkingConfig → reasoning_effort', () => {
  test('budgets by size, levels by name, 0 is none, includeThoughts alone asks nothing', () => {
    expect(reasoningEffortOf({ thinkingBudget: 0 })).toBe('none')
    expect(reasoningEffortOf({ thinkingBudget: -1 })).toBe('medium')
    expect(reasoningEffortOf({ thinkingBudget: 1024 })).toBe('low')
    expect(reasoningEffortOf({ thinkingBudget: 8192 })).toBe('medium')
    expect(reasoningEffortOf({ thinkingBudget: 32_768 })).toBe('high')
    expect(reasoningEffortOf({ thinkingLevel: 'HIGH' })).toBe('high')
    expect(reasoningEffortOf({ includeThoughts: true })).toBeUndefined()
    expect(() => reasoningEffortOf({ thinkingLevel: 'max' })).toThrow(/thinkingLevel/)
    expect(() => reasoningEffortOf({ thinkingLevel: 'low', thinkingBudget: 10 })).toThrow(/not both/)
  })
})

const chunk = (
  delta: Record<string, unknown>,
  finish: string | null = null,
  usage?: object,
): ChatCompletionChunk =>
  ({
    id: 'chatcmpl-r1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    choices: usage ? [] : [{ index: 0, delta, finish_reason: finish }],
    ...(usage ? { usage } : {}),
  }) as ChatCompletionChunk

describe('GeminiStreamEncoder', () => {
  const stream = [
    chunk({ role: 'assistant', content: '' }),
    chunk({ reasoning_content: 'hmm' }),
    chunk({ content: 'Hi' }),
    chunk({ tool_calls: [{ index: 0, id: 'call_1', function: { name: 'f', arguments: '{"a"' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }),
    chunk({}, 'tool_calls'),
    chunk({}, null, {
      prompt_tokens: 5,
      completion_tokens: 7,
      total_tokens: 12,
      completion_tokens_details: { reasoning_tokens: 3 },
    }),
  ]

  test('SSE: text as it comes, the call whole with the finish and the usage in one last event', () => {
    const enc = new GeminiStreamEncoder('demo/agent', true, true)
    const out =
      stream.map((c) => enc.encodeText(c) ?? '').join('') +
      new TextDecoder().decode(enc.end() ?? new Uint8Array())
    const events = out
      .split('\r\n\r\n')
      .filter(Boolean)
      .map((e) => JSON.parse(e.replace(/^data: /, '')))
    expect(events.map((e) => e.candidates[0].content.parts)).toEqual([
      [{ text: 'hmm', thought: true }],
      [{ text: 'Hi' }],
      [{ functionCall: { id: 'call_1', name: 'f', args: { a: 1 } } }],
    ])
    expect(events[2].candidates[0].finishReason).toBe('STOP')
    expect(events[2].usageMetadata).toEqual({
      promptTokenCount: 5,
      candidatesTokenCount: 4,
      thoughtsTokenCount: 3,
      totalTokenCount: 12,
    })
    expect(events[0]).toMatchObject({ modelVersion: 'demo/agent', responseId: 'r1' })
  })

  test('without alt=sse: one JSON array; thoughts left out unless includeThoughts', () => {
    const enc = new GeminiStreamEncoder('demo/agent', false, false)
    expect(enc.contentType).toContain('application/json')
    const out =
      stream.map((c) => enc.encodeText(c) ?? '').join('') +
      new TextDecoder().decode(enc.end() ?? new Uint8Array())
    const events = JSON.parse(out) as any[]
    expect(events.length).toBe(2)
    expect(events[0].candidates[0].content.parts).toEqual([{ text: 'Hi' }])
    const empty = new GeminiStreamEncoder('m', false, false)
    expect(new TextDecoder().decode(empty.end()!)).toBe('[]')
  })
})

describe('lostInTranslation', () => {
  test('names what only the pass-through keeps; nothing for a request the chat form carries whole', async () => {
    const { lostInTranslation } = await import('../../../src/surfaces/gemini/lost-in-translation.ts')
    const contents = [{ role: 'user', parts: [{ text: 'hi' }] }]
    expect(
      lostInTranslation({ contents, generationConfig: { temperature: 1, maxOutputTokens: 9 } }),
    ).toBeNull()
    expect(lostInTranslation({ contents, safetySettings: [] } as never)).toBe('safetySettings')
    expect(
      lostInTranslation({ contents, generationConfig: { thinkingConfig: { includeThoughts: true } } }),
    ).toBe('generationConfig.thinkingConfig')
    const signed = [{ role: 'model', parts: [{ functionCall: { name: 'f' }, thoughtSignature: 'abc' }] }]
    expect(lostInTranslation({ contents: signed })).toBe('contents[0].parts[0].thoughtSignature')
  })
})
