import { describe, expect, test } from 'bun:test'
import { validateChatRequest } from '../../../src/surfaces/chat/validate.ts'
import { applyDefaults } from '../../../src/surfaces/shared/chat-defaults.ts'
import type { ChatRequestInput } from '../../../src/surfaces/shared/chat-request-schema.ts'
import { gatewayError, model, request } from '../chat/helpers.ts'

const input = (fields: Record<string, unknown> = {}) =>
  validateChatRequest(request(fields)) as ChatRequestInput
const m = model({ max_output_tokens: 1000 })

describe('applyDefaults', () => {
  test('sets model to the upstream name and returns a copy, leaving the input untouched', () => {
    const req = input({ temperature: null, metadata: { a: 'b' } })
    const before = structuredClone(req)
    const out = applyDefaults(req, m, 'upstream-name')
    expect(out.model).toBe('upstream-name')
    expect(out).not.toBe(req)
    expect(out.messages).toBe(req.messages)
    expect(out.metadata).toEqual({ a: 'b' })
    expect(req).toEqual(before)
  })

  // Issue 22: these three asserted the injected defaults (temperature 1 clamped into the model's
  // range, max_tokens = the model's maximum): defaults the upstream applies by itself, and OpenAI's
  // reasoning models refuse max_tokens. Nothing is filled in now.
  test('no temperature is filled in; a given one is kept', () => {
    expect('temperature' in applyDefaults(input(), m, 'x')).toBe(false)
    expect('temperature' in applyDefaults(input(), model({ temperature: { min: 0, max: 0.5 } }), 'x')).toBe(
      false,
    )
    expect(applyDefaults(input({ temperature: 0 }), m, 'x').temperature).toBe(0)
  })

  test('no limit is filled in when neither is given', () => {
    const out = applyDefaults(input(), m, 'x')
    expect('max_tokens' in out).toBe(false)
    expect('max_completion_tokens' in out).toBe(false)
  })

  test('a given limit is kept and the other not added', () => {
    expect(applyDefaults(input({ max_tokens: 10 }), m, 'x')).toMatchObject({ max_tokens: 10 })
    const out = applyDefaults(input({ max_completion_tokens: 20 }), m, 'x')
    expect(out.max_completion_tokens).toBe(20)
    expect('max_tokens' in out).toBe(false)
  })

  test('the model maximum itself is allowed', () => {
    expect(applyDefaults(input({ max_tokens: 1000 }), m, 'x').max_tokens).toBe(1000)
  })

  test.each([['max_tokens'], ['max_completion_tokens']])(
    '%s above the model maximum → 400 invalid_value',
    (field) => {
      const error = gatewayError(() => applyDefaults(input({ [field]: 1001 }), m, 'x'), {
        code: 'invalid_value',
        param: field,
      })
      expect(error.message).toContain('1000')
      expect(error.message).toContain('1001')
    },
  )

  test('both limits given and equal pass; different → 400', () => {
    const same = applyDefaults(input({ max_tokens: 50, max_completion_tokens: 50 }), m, 'x')
    expect(same).toMatchObject({ max_tokens: 50, max_completion_tokens: 50 })
    gatewayError(() => applyDefaults(input({ max_tokens: 50, max_completion_tokens: 60 }), m, 'x'), {
      code: 'invalid_value',
      param: 'max_tokens',
    })
  })

  test('null known parameters are dropped (not defaulted); unknown nulls pass through', () => {
    const out = applyDefaults(
      input({ temperature: null, max_tokens: null, stop: null, seed: null, foo: null }),
      m,
      'x',
    )
    expect('temperature' in out).toBe(false)
    expect('max_tokens' in out).toBe(false)
    expect('stop' in out).toBe(false)
    expect('seed' in out).toBe(false)
    expect(out.foo).toBeNull()
  })

  test('stream_options is kept only for streaming requests', () => {
    const options = { include_usage: true }
    expect(applyDefaults(input({ stream: true, stream_options: options }), m, 'x').stream_options).toEqual(
      options,
    )
    expect('stream_options' in applyDefaults(input({ stream_options: options }), m, 'x')).toBe(false)
    expect('stream_options' in applyDefaults(input({ stream: false, stream_options: options }), m, 'x')).toBe(
      false,
    )
  })

  test('a "__proto__" key stays an own key of the copy and never becomes its prototype', () => {
    const req = validateChatRequest(
      JSON.parse(
        '{"model": "a/b", "messages": [{"role": "user", "content": "x"}], "__proto__": {"polluted": 1}}',
      ),
    )
    const out = applyDefaults(req, m, 'x')
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype)
    expect((out as Record<string, unknown>).polluted).toBeUndefined()
    expect(JSON.stringify(out)).toContain('"__proto__":{"polluted":1}')
  })
})
