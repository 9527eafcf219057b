import { describe, expect, test } from 'bun:test'
import { GatewayError } from '../../../src/util/errors.ts'
import { generateMalformedBodies } from '../../support/malformed-bodies.ts'
import { catalogue } from './helpers.ts'
import { prepareChat } from './prepare.ts'

/** The corpus prepareChat is fuzzed with; its mutation families are checked on it too (one build). */
const CORPUS = generateMalformedBodies(20_240_601, 2000)

describe('generateMalformedBodies', () => {
  test('is reproducible: the same seed gives the same bodies', () => {
    const a = generateMalformedBodies(7, 50)
    expect(generateMalformedBodies(7, 50)).toEqual(a)
    expect(generateMalformedBodies(8, 50)).not.toEqual(a)
  })

  test('body i does not depend on the count', () => {
    expect(generateMalformedBodies(7, 10)).toEqual(generateMalformedBodies(7, 20).slice(0, 10))
  })

  test('covers the mutation families', () => {
    const labels = CORPUS.map((b) => b.mutation).join('\n')
    for (const family of [
      'wrong-type',
      'delete',
      'null',
      'array-object-swap',
      'proto-key',
      'unknown-role',
      'tool-without-tool_call_id',
      'huge-string',
      'huge-number',
      'deep-nesting',
      'messages x',
      'truncated',
      'trailing comma',
      'BOM',
      'NaN',
      'not an object',
    ]) {
      expect(labels).toContain(family)
    }
  })
})

describe('prepareChat on 2,000 malformed bodies', () => {
  test('only ever throws GatewayError with a 4xx status, and what passes can be sent upstream', () => {
    const outcomes = new Map<string, number>()
    const failures: string[] = []
    for (const { body, mutation } of CORPUS) {
      try {
        const chat = prepareChat(body, catalogue)
        JSON.stringify(chat.request)
        outcomes.set('ok', (outcomes.get('ok') ?? 0) + 1)
      } catch (error) {
        const ok =
          error instanceof GatewayError &&
          error.status >= 400 &&
          error.status < 500 &&
          error.message.length > 0 &&
          (error.param === null || typeof error.param === 'string')
        if (!ok) failures.push(`${mutation}: ${error instanceof Error ? error.stack : String(error)}`)
        else outcomes.set(error.code, (outcomes.get(error.code) ?? 0) + 1)
      }
    }
    expect(failures).toEqual([])
    // The corpus reaches every stage: JSON errors, schema errors, routing, features, and success.
    for (const code of [
      'invalid_json',
      'invalid_type',
      'invalid_value',
      'missing_required_parameter',
      'unsupported_feature',
      'ok',
    ]) {
      expect(outcomes.get(code) ?? 0).toBeGreaterThan(0)
    }
    // About 2 s of CPU; the default 5 s timeout trips on a loaded machine (seen at load 14 on 2 cores).
  }, 30_000)
})
