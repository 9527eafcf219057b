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
