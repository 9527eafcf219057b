/**
 * Request values OpenAI's Responses schema allows that the gateway refused: `input_image.detail:
 * "original"` (the schema's ImageDetail enum; chat's closest is `high`, what a translated route
 * sends) and `safety_identifier: null`.
 */
import { expect, test } from 'bun:test'
import { decodeView } from '../../../src/surfaces/responses/view.ts'

test('input_image detail "original" is taken; translated to chat it is "high"', () => {
  const view = decodeView(
    JSON.stringify({
      model: 'p/gpt',
      input: [
        {
          role: 'user',
          content: [{ type: 'input_image', image_url: 'https://example.com/y.png', detail: 'original' }],
        },
      ],
    }),
  )
  const parts = view.decoded.chat.messages.at(-1)!.content as Array<{ type: string; image_url?: unknown }>
  expect(parts.find((p) => p.type === 'image_url')!.image_url).toEqual({
    url: 'https://example.com/y.png',
    detail: 'high',
  })
})

test('safety_identifier null is taken, as the schema allows', () => {
  expect(() =>
    decodeView(JSON.stringify({ model: 'p/gpt', input: 'hi', safety_identifier: null })),
  ).not.toThrow()
})

test("function_call_output with an image (Codex's view_image): the tool message keeps the text, the image follows the run of outputs as a user message", () => {
  const view = decodeView(
    JSON.stringify({
      model: 'p/gpt',
      input: [
        { role: 'user', content: 'look at both' },
        { type: 'function_call', call_id: 'c1', name: 'view_image', arguments: '{"path":"a.png"}' },
        { type: 'function_call', call_id: 'c2', name: 'view_image', arguments: '{"path":"b.png"}' },
        {
          type: 'function_call_output',
          call_id: 'c1',
          output: [{ type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=' }],
        },
        {
          type: 'function_call_output',
          call_id: 'c2',
          output: [
            { type: 'input_text', text: 'b:' },
            { type: 'input_image', image_url: 'data:image/png;base64,AAAA' },
          ],
        },
      ],
    }),
  )
  expect(view.decoded.problems).toEqual([])
  const messages = view.decoded.chat.messages as any[]
  expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'user'])
  expect(messages[2]).toMatchObject({
    tool_call_id: 'c1',
    content: 'The result is the image in the next message.',
  })
  expect(messages[3]).toMatchObject({ tool_call_id: 'c2', content: 'b:' })
  expect(messages[4].content.map((p: any) => p.image_url.url)).toEqual([
    'data:image/png;base64,iVBORw0KGgo=',
    'data:image/png;base64,AAAA',
  ])
})
