/**
 * A JSON chat request under a limit is asked of the upstream as a stream, and capped, in
 * `forwardBody`'s one edit of the client's body (issues 41/46: it was edited twice more after the
 * splice — the cap's `setTopLevel` clamp, then `streamingBody` — each a pass over a body that grows
 * to ~150 KB on an agent's turns). The one edit asks exactly what the three did.
 */
import { describe, expect, test } from 'bun:test'
import type { ModelConfig } from '../../../src/config/schema.ts'
import { setTopLevel, streamingBody, topLevelFields, topLevelValue } from '../../../src/json/fields.ts'
import { parseJsonObject } from '../../../src/json/parse-json-body.ts'
import { flatText } from '../../../src/json/spliced.ts'
import { chatForwarding } from '../../../src/surfaces/chat/forward.ts'
import { forwardBody } from '../../../src/surfaces/chat/forward-request.ts'
import { CHAT_EXAMPLE, validateChatRequest } from '../../../src/surfaces/chat/validate.ts'

const model = { name: 'm', upstream_name: 'up', max_output_tokens: 100 } as ModelConfig
const view = (json: string) => validateChatRequest(parseJsonObject(json, CHAT_EXAMPLE))
const messages = '"messages":[{"role":"user","content":"hi"}]'
const USAGE = { stream_options: '{"include_usage":true}' }

const bodies = [
  ['no stream member, max_tokens', `{"model":"p/m",${messages},"max_tokens":7}`],
  [
    'stream false, max_completion_tokens',
    `{"model":"p/m","stream":false,${messages},"max_completion_tokens":9}`,
  ],
  ['both limits', `{"model":"p/m",${messages},"max_tokens":7,"max_completion_tokens":9}`],
  [
    'stream null, options null, a null limit',
    `{"model":"p/m","stream":null,"stream_options":null,${messages},"max_tokens":null}`,
  ],
  [
    'options sent with a JSON request, no limit',
    `{"stream_options":{"include_usage":false},"model":"p/m",${messages}}`,
  ],
  ['a duplicated key (re-serialised)', `{"model":"p/m","model":"p/m",${messages},"max_tokens":3}`],
  [
    'a large body (spliced)',
    `{"model":"p/m","messages":[{"role":"user","content":"${'w '.repeat(40_000)}"}],"max_tokens":5}`,
  ],
] as const

/**
 * The text parsed, each top-level key in it once: JSON.parse keeps the last of two equal keys, so
 * a splice that inserted `stream` or a limit beside the client's own would compare equal without this.
 */
function parsedOnce(text: string): Record<string, unknown> {
  const parsed = JSON.parse(text) as Record<string, unknown>
  expect((topLevelFields(text) ?? []).length / 4).toBe(Object.keys(parsed).length)
  return parsed
}

/** The chat clamp the cap was before (main cac1dd9): the body's own member where only `max_tokens`, else `max_completion_tokens`. */
function clamp(body: string, n: number): string {
  const present = (key: string) => {
    const v = topLevelValue(body, key)
    return v !== undefined && v !== 'null'
  }
  const field =
    present('max_tokens') && !present('max_completion_tokens') ? 'max_tokens' : 'max_completion_tokens'
  return setTopLevel(body, { [field]: String(n) })
}

/** What the splice, the cap's clamp (or its member added, with no limit of the client's) and `streamingBody` made. */
function threeEdits(
  json: string,
  param: 'max_completion_tokens' | 'max_tokens',
  cap: number,
): Record<string, unknown> {
  const spliced = flatText(forwardBody(view(json), json, model, param))
  const v = view(json)
  const clamped =
    v.max_tokens == null && v.max_completion_tokens == null
      ? `{"${param}":${cap},${spliced.slice(1)}`
      : clamp(spliced, cap)
  return JSON.parse(streamingBody(clamped, USAGE))
}

describe('forwardBody asked as a stream and capped, in one edit', () => {
  for (const param of ['max_completion_tokens', 'max_tokens'] as const)
    test.each(bodies)(`%s (${param}): what the three edits asked`, (_, json) => {
      const one = parsedOnce(
        flatText(forwardBody(view(json), json, model, param, { streamed: true, cap: 4 })),
      )
      expect(one).toEqual(threeEdits(json, param, 4))
      expect(one.stream).toBe(true)
      expect(one.stream_options).toEqual({ include_usage: true })
      expect(one[param]).toBe(4)
    })

  test.each(bodies)('%s, streamed only: what the splice and streamingBody asked', (_, json) => {
    const one = parsedOnce(
      flatText(forwardBody(view(json), json, model, 'max_completion_tokens', { streamed: true })),
    )
    const two = JSON.parse(
      streamingBody(flatText(forwardBody(view(json), json, model, 'max_completion_tokens')), USAGE),
    )
    expect(one).toEqual(two)
  })

  test('the forwarding says what it did, and does nothing it was not asked', () => {
    const json = `{"model":"p/m",${messages}}`
    const entry = { model, provider: { kind: 'openai' } } as never
    const asked = chatForwarding.request(view(json), entry, json, new Headers(), { streamed: true, cap: 3 })
    expect(asked.streamed).toBe(true)
    expect(asked.capped).toBe(true)
    expect(JSON.parse(flatText(asked.body))).toMatchObject({ stream: true, max_completion_tokens: 3 })
    const plain = chatForwarding.request(view(json), entry, json, new Headers())
    expect(plain.streamed).toBeUndefined()
    expect(plain.capped).toBeUndefined()
    expect(JSON.parse(flatText(plain.body))).toEqual({
      model: 'up',
      messages: [{ role: 'user', content: 'hi' }],
    })
  })
})
