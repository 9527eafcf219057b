import { describe, expect, test } from 'bun:test'
import { scrubbed } from '../../src/providers/scrub.ts'
import {
  clampRetryAfter,
  describeNetworkError,
  networkErrorDetail,
} from '../../src/providers/upstream-errors.ts'
import { GatewayError } from '../../src/util/errors.ts'

const bunError = (code: string, message: string, path?: string) =>
  Object.assign(new TypeError(message), { code, ...(path ? { path } : {}) })

describe('network errors', () => {
  test('the client text is built from the code alone', () => {
    const url = 'http://10.1.2.3:8443/v1/chat/completions?key=abc'
    expect(
      describeNetworkError(bunError('Malformed_HTTP_Response', `Malformed_HTTP_Response fetching "${url}"`)),
    ).toBe('malformed HTTP response (Malformed_HTTP_Response)')
    expect(describeNetworkError(bunError('ENOTFOUND', 'getaddrinfo ENOTFOUND internal.corp'))).toBe(
      'host name not found (ENOTFOUND)',
    )
    expect(describeNetworkError(bunError('SomeNewCode', url))).toBe('network error (SomeNewCode)')
    expect(describeNetworkError(bunError('bad code with spaces', url))).toBe('network error')
    expect(describeNetworkError(new Error(url))).toBe('network error')
  })

  test('the log text keeps the address, loses the key', () => {
    const d = networkErrorDetail(
      bunError('ECONNREFUSED', 'ECONNREFUSED: Unable to connect', 'http://10.1.2.3:8443/v1?key=k-123456&x=1'),
      'k-123456',
    )
    expect(d).toContain('10.1.2.3:8443')
    expect(d).not.toContain('k-123456')
  })
})

describe('clampRetryAfter', () => {
  const now = Date.parse('2026-01-01T00:00:00Z')
  test.each([
    ['99999999999999999999', '3600'],
    ['3601', '3600'],
    ['3600', '3600'],
    ['0', '0'],
    ['1.2', '2'],
    [' 7 ', '7'],
    ['Thu, 01 Jan 2026 00:00:30 GMT', '30'],
    ['Wed, 31 Dec 2025 23:00:00 GMT', '0'],
    ['Sat, 01 Jan 2028 00:00:00 GMT', '3600'],
  ])('%p → %p', (value, expected) => {
    expect(clampRetryAfter(value, now)).toBe(expected)
  })
  test.each([['soon'], ['-5'], ['1e9'], [''], ['12abc']])('%p is dropped', (value) => {
    expect(clampRetryAfter(value, now)).toBeUndefined()
  })
})

describe('scrubbed', () => {
  test('removes the key, the upstream host with its port, path and query, and clamps retry-after', () => {
    const err = new GatewayError(
      429,
      'upstream_rate_limited',
      'llm.internal:8000/v1/x?key=K-999999 said no; key K-999999',
      {
        headers: { 'retry-after': '86400', other: 'kept' },
      },
    )
    const out = scrubbed(err, { api_key: 'K-999999', base_url: 'http://llm.internal:8000/v1' })
    expect(out.message).toBe('<upstream> said no; key ***')
    expect(out.headers).toEqual({ 'retry-after': '3600', other: 'kept' })
    expect([out.status, out.code]).toEqual([429, 'upstream_rate_limited'])
  })

  test('an error with nothing to scrub is returned as is', () => {
    const err = new GatewayError(400, 'x', 'model not found')
    expect(scrubbed(err, { api_key: 'K-999999', base_url: 'http://llm.internal/v1' })).toBe(err)
  })
})
