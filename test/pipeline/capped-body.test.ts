/**
 * A pass-through body whose own cap the limits clamped (each surface's `Forwarding.outputCap.clamp`,
 * applied by pipeline/operations/chat-cap.ts): the cap set in the wire's own field by a text edit, every other byte kept, and a Messages thinking
 * budget fitted below the cap, since Anthropic refuses `budget_tokens` at or above `max_tokens`.
 */
import { expect, test } from 'bun:test'
import type { ModelConfig } from '../../src/config/schema.ts'
import { flatText } from '../../src/json/spliced.ts'
import { forwardBody } from '../../src/surfaces/chat/forward-request.ts'
import { messagesSurface } from '../../src/surfaces/messages/index.ts'
import { responsesSurface } from '../../src/surfaces/responses/index.ts'
import type { ChatRequestInput } from '../../src/surfaces/shared/chat-request-schema.ts'
import { GatewayError } from '../../src/util/errors.ts'

const SURFACES = { messages: messagesSurface, responses: responsesSurface }

/** The body as the surface's pass-through clamps it to `n` (chat's: capped in its one edit, `forwardBody`'s `cap`). */
const cappedBody = (body: string, surface: keyof typeof SURFACES | 'chat', n: number): string => {
  if (surface !== 'chat') return SURFACES[surface].forward!.outputCap.clamp!(body, n)
  const view = JSON.parse(body) as ChatRequestInput
  const param = view.max_tokens != null ? 'max_tokens' : 'max_completion_tokens'
  return flatText(forwardBody(view, body, { name: 'm' } as ModelConfig, param, { cap: n }))
}

test('each surface’s own cap field, edited in the text', () => {
  expect(cappedBody('{"model":"m", "max_tokens":9000,"x":1.50}', 'messages', 500)).toBe(
    '{"model":"m", "max_tokens":500,"x":1.50}',
  )
  expect(cappedBody('{"model":"m","max_output_tokens":9000}', 'responses', 500)).toBe(
    '{"model":"m","max_output_tokens":500}',
  )
  expect(cappedBody('{"model":"m","max_tokens":9000}', 'chat', 500)).toBe('{"model":"m","max_tokens":500}')
  expect(cappedBody('{"model":"m","max_completion_tokens":9000}', 'chat', 500)).toBe(
    '{"model":"m","max_completion_tokens":500}',
  )
})

test('Messages: a thinking budget at or above the clamped cap is fitted below it (3/4, at least 1,024)', () => {
  const body = '{"model":"m","max_tokens":32000,"thinking":{"type":"enabled","budget_tokens":16000}}'
  const capped = JSON.parse(cappedBody(body, 'messages', 8000))
  expect(capped.max_tokens).toBe(8000)
  expect(capped.thinking).toEqual({ type: 'enabled', budget_tokens: 6000 })
  expect(JSON.parse(cappedBody(body, 'messages', 1200)).thinking.budget_tokens).toBe(1024)
  // A budget that still fits is the client's.
  expect(JSON.parse(cappedBody(body, 'messages', 20000)).thinking.budget_tokens).toBe(16000)
})

test('Messages: a cap that leaves no room to think is a 400 naming max_tokens, never sent upstream', () => {
  const body = '{"model":"m","max_tokens":32000,"thinking":{"type":"enabled","budget_tokens":16000}}'
  let err: unknown
  try {
    cappedBody(body, 'messages', 1000)
  } catch (e) {
    err = e
  }
  expect(err).toBeInstanceOf(GatewayError)
  expect((err as GatewayError).status).toBe(400)
  expect((err as GatewayError).param).toBe('max_tokens')
})
