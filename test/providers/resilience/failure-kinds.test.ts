/**
 * Failure kinds (DESIGN §10): each status, provider code and transport fault lands on one kind,
 * codes outranking statuses, and each kind's row of the action table says what §10 says.
 */
import { describe, expect, test } from 'bun:test'
import { upstreamCode } from '../../../src/providers/failure-facts.ts'
import {
  ACTIONS,
  classify,
  FAILURE_KINDS,
  type FailureFacts,
  type FailureKind,
} from '../../../src/providers/resilience/failure-kinds.ts'

const cases: Array<[FailureFacts, FailureKind]> = [
  // rate limited: 429 with or without OpenAI's code, Anthropic's type, Gemini's status
  [{ status: 429 }, 'rate_limited'],
  [{ status: 429, code: 'rate_limit_exceeded' }, 'rate_limited'],
  [{ status: 429, code: 'rate_limit_error' }, 'rate_limited'],
  [{ status: 429, code: 'RESOURCE_EXHAUSTED' }, 'rate_limited'],
  // credential or quota: the code beats the 429
  [{ status: 429, code: 'insufficient_quota' }, 'credential'],
  [{ status: 401 }, 'credential'],
  [{ status: 401, code: 'invalid_api_key' }, 'credential'],
  [{ status: 402, code: 'billing_error' }, 'credential'],
  [{ status: 403 }, 'credential'],
  [{ status: 400, code: 'API_KEY_INVALID' }, 'credential'],
  // an in-band error event in a 200 stream: its code decides
  [{ status: 200, code: 'insufficient_quota' }, 'credential'],
  [{ code: 'overloaded_error' }, 'transient'],
  // transient
  [{ status: 500 }, 'transient'],
  [{ status: 502 }, 'transient'],
  [{ status: 503 }, 'transient'],
  [{ status: 504 }, 'transient'],
  [{ status: 529, code: 'overloaded_error' }, 'transient'],
  [{ status: 529 }, 'transient'],
  [{ status: 408 }, 'transient'],
  [{ transport: 'unreachable' }, 'transient'],
  [{ transport: 'cut' }, 'transient'],
  [{ transport: 'stall' }, 'transient'],
  [{ transport: 'invalid' }, 'transient'],
  // an answer past max_response_bytes: never asked again of the same target
  [{ status: 502, code: 'upstream_response_too_large' }, 'oversized'],
  // silent, slow first token
  [{ transport: 'no_response' }, 'silent'],
  [{ transport: 'no_first_token' }, 'slow_first_token'],
  // the request's own fault
  [{ status: 400 }, 'request_fault'],
  [{ status: 400, code: 'invalid_value', message: 'Invalid value for temperature.' }, 'request_fault'],
  [{ status: 404 }, 'request_fault'],
  [{ status: 413 }, 'request_fault'],
  [{ status: 413, code: 'request_too_large' }, 'request_fault'],
  [{ status: 422 }, 'request_fault'],
  // context overflow: OpenAI's code, Anthropic's and Gemini's words
  [{ status: 400, code: 'context_length_exceeded' }, 'context_overflow'],
  [
    {
      status: 400,
      code: 'invalid_request_error',
      message: 'prompt is too long: 215000 tokens > 200000 maximum',
    },
    'context_overflow',
  ],
  [
    {
      status: 400,
      code: 'INVALID_ARGUMENT',
      message: 'The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).',
    },
    'context_overflow',
  ],
  // content policy
  [{ status: 400, code: 'content_filter' }, 'content_policy'],
  [{ status: 400, code: 'content_policy_violation' }, 'content_policy'],
  [{ status: 400, code: 'invalid_prompt' }, 'content_policy'],
]

describe('classify', () => {
  for (const [facts, kind] of cases) {
    test(`${JSON.stringify(facts)} → ${kind}`, () => {
      expect(classify(facts)).toBe(kind)
    })
  }
  test('an error status outranks the transport fault seen while reading it', () => {
    expect(classify({ status: 503, transport: 'cut' })).toBe('transient')
    expect(classify({ status: 401, transport: 'cut' })).toBe('credential')
  })
  test("Google's bad key (400 INVALID_ARGUMENT, reason API_KEY_INVALID) is a credential failure, not the request's", () => {
    const body = JSON.stringify({
      error: {
        code: 400,
        message: 'API key not valid. Please pass a valid API key.',
        status: 'INVALID_ARGUMENT',
        details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID' }],
      },
    })
    expect(classify({ status: 400, code: upstreamCode(body) })).toBe('credential')
    // A field violation carries no reason: still the request's own fault.
    const bad = JSON.stringify({ error: { code: 400, message: 'Invalid value', status: 'INVALID_ARGUMENT' } })
    expect(classify({ status: 400, code: upstreamCode(bad) })).toBe('request_fault')
  })

  test("the gateway's own fault outranks whatever else was seen", () => {
    expect(classify({ gateway: true })).toBe('internal')
    expect(classify({ gateway: true, status: 200, transport: 'invalid' })).toBe('internal')
    // An upstream's own code that reads alike is the upstream's: a 500 from it is transient.
    expect(classify({ status: 500, code: 'internal_error' })).toBe('transient')
  })

  test('an unknown code falls back to the status', () => {
    expect(classify({ status: 401, code: 'something_new' })).toBe('credential')
    expect(classify({ status: 418, code: 'teapot' })).toBe('request_fault')
  })
})

describe('the action table (DESIGN §10)', () => {
  test('one row per kind, nothing else', () => {
    expect(Object.keys(ACTIONS).sort()).toEqual([...FAILURE_KINDS].sort())
  })
  test('rate limited: honour retry-after, the key rests until then, another key at once, else fail over', () => {
    expect(ACTIONS.rate_limited).toMatchObject({
      retry: 'retry_after',
      key: 'rest_retry_after',
      nextKey: true,
      failover: 'always',
    })
  })
  test('credential or quota: no retry on that key, it rests the cooldown, the next key at once, else fail over', () => {
    expect(ACTIONS.credential).toMatchObject({
      retry: 'none',
      key: 'rest_cooldown',
      nextKey: true,
      failover: 'always',
    })
  })
  test('transient: backoff on the same target, then fail over; a failure for the circuit', () => {
    expect(ACTIONS.transient).toMatchObject({
      retry: 'backoff',
      key: 'keep',
      failover: 'always',
      circuit: 'failure',
    })
  })
  test('silent: fail over at once, never the same target again for this request', () => {
    expect(ACTIONS.silent).toMatchObject({
      retry: 'none',
      failover: 'always',
      skipForRequest: true,
      circuit: 'failure',
    })
  })
  test('slow first token: fail over while unseen; with nothing left, keep waiting', () => {
    expect(ACTIONS.slow_first_token).toMatchObject({ retry: 'none', failover: 'always', lastResort: 'wait' })
  })
  test('the request’s own fault and content policy: never retried, never failed over; context overflow only to a larger window', () => {
    expect(ACTIONS.request_fault).toMatchObject({ retry: 'none', failover: 'never', nextKey: false })
    expect(ACTIONS.content_policy).toMatchObject({ retry: 'none', failover: 'never', nextKey: false })
    expect(ACTIONS.context_overflow).toMatchObject({ retry: 'none', failover: 'larger_context' })
  })
  test("the gateway's own fault: no retry, no other key, only to another provider kind, never a circuit failure", () => {
    expect(ACTIONS.internal).toMatchObject({
      retry: 'none',
      nextKey: false,
      failover: 'other_kind',
      skipForRequest: true,
      circuit: 'none',
    })
  })
  test('an oversized answer is not asked for again from the same target: fail over at once', () => {
    expect(ACTIONS.oversized).toMatchObject({ retry: 'none', failover: 'always', skipForRequest: true })
  })
  test('only transient and silent failures count against a circuit; answers that prove the target up close it', () => {
    const failing = FAILURE_KINDS.filter((k) => ACTIONS[k].circuit === 'failure').sort()
    expect(failing).toEqual(['silent', 'transient'])
    expect(ACTIONS.request_fault.circuit).toBe('alive')
  })
})
