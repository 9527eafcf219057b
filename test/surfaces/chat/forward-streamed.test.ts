/**
 * A JSON chat request under a limit is asked of the upstream as a stream in `forwardBody`'s one
 * edit of the client's body (issue 41/46: it was edited again by `streamingBody` after the
 * splice, a second pass over a body that grows to ~150 KB on an agent's turns). The one edit asks
 * exactly what the two did.
 */
import { describe, expect, test } from 'bun:test'
import type { ModelConfig } from '../../../src/config/schema.ts'
import { streamingBody } from '../../../src/json/fields.ts'
import { parseJsonObject } from '../../../src/json/parse-json-body.ts'
import { flatText } from '../../../src/json/spliced.ts'
import { chatForwarding } from '../../../src/surfaces/chat/forward.ts'
import { forwardBody } from '../../../src/surfaces/chat/forward-request.ts'
import { CHAT_EXAMPLE, validateChatRequest } from '../../../src/surfaces/chat/validate.ts'

const model = { name: 'm', upstream_name: 'up', max_output_tokens: 100 } as ModelConfig
const view = (json: string) => validateChatRequest(parseJsonObject(json, CHAT_EXAMPLE))
const messages = '"messages":[{"role":"user","content":"hi"}]'

describe('forwardBody asked as a stream', () => {
  test.each([
    ['no stream member', `{"model":"p/m",${messages},"max_tokens":7}`],
    ['stream false', `{"model":"p/m","stream":false,${messages}}`],
    ['stream null, options null', `{"model":"p/m","stream":null,"stream_options":null,${messages}}`],
    [
      'options sent with a JSON request',
      `{"stream_options":{"include_usage":false},"model":"p/m",${messages}}`,
    ],
    ['a duplicated key (re-serialised)', `{"model":"p/m","model":"p/m",${messages},"max_tokens":3}`],
    [
      'a large body (spliced)',
      `{"model":"p/m","messages":[{"role":"user","content":"${'w '.repeat(40_000)}"}]}`,
    ],
  ])('%s: what the splice and streamingBody asked, in one edit', (_, json) => {
    const one = JSON.parse(flatText(forwardBody(view(json), json, model, 'max_completion_tokens', true)))
    const two = JSON.parse(
      streamingBody(flatText(forwardBody(view(json), json, model, 'max_completion_tokens')), {
        stream_options: '{"include_usage":true}',
      }),
    )
    expect(one).toEqual(two)
    expect(one.stream).toBe(true)
    expect(one.stream_options).toEqual({ include_usage: true })
  })

  test('the forwarding says so, and is not asked as a stream otherwise', () => {
    const json = `{"model":"p/m",${messages}}`
    const entry = { model, provider: { kind: 'openai' } } as never
    const asked = chatForwarding.request(view(json), entry, json, new Headers(), true)
    expect(asked.streamed).toBe(true)
    expect(JSON.parse(flatText(asked.body)).stream).toBe(true)
    const plain = chatForwarding.request(view(json), entry, json, new Headers())
    expect(plain.streamed).toBeUndefined()
    expect(JSON.parse(flatText(plain.body)).stream).toBeUndefined()
  })
})
