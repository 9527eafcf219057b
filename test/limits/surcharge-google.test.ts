/**
 * Google's built-in tools in a Gemini body under a money limit (DESIGN §11, §14): Search grounding
 * is reserved and charged as one web search a request where the model prices it, and refused by
 * name where it does not; the tools no request can bound are refused; a function declaration
 * is nothing extra; and a provider of another kind (which never receives them) is not asked to
 * price them.
 */
import { describe, expect, test } from 'bun:test'
import type { ModelConfig } from '../../src/config/index.ts'
import { type Reached, surchargeOf } from '../../src/limits/surcharge.ts'

const reached = (kind: 'gemini' | 'openai' | 'anthropic', pricing: ModelConfig['pricing']): Reached => ({
  model: { name: 'm', context_window: 1_000_000, pricing } as ModelConfig,
  provider: { kind, wire: undefined } as Reached['provider'],
})
const PLAIN = { input: 1, output: 2 }
const SEARCH = { input: 1, output: 2, per_call: { web_search: 0.035 } }

const refusal = (fn: () => unknown) => {
  try {
    fn()
  } catch (e) {
    return e as { status: number; code: string; param?: string }
  }
  return null
}

describe("Google's built-in tools", () => {
  test('googleSearch: one web search a request where priced, refused naming it where not', () => {
    const body = { tools: [{ functionDeclarations: [] }, { googleSearch: {} }] }
    expect(surchargeOf(body, [reached('gemini', SEARCH)], true).calls).toEqual([
      { tool: 'web_search', calls: 1 },
    ])
    expect(refusal(() => surchargeOf(body, [reached('gemini', PLAIN)], true))).toMatchObject({
      status: 400,
      code: 'unsupported_value',
      param: 'tools[1].googleSearch',
    })
  })

  test('the tools no request bounds are refused under a money limit, passed without one', () => {
    for (const key of ['urlContext', 'codeExecution', 'googleMaps', 'fileSearch']) {
      const body = { tools: [{ [key]: {} }] }
      expect(refusal(() => surchargeOf(body, [reached('gemini', SEARCH)], true))).toMatchObject({
        param: `tools[0].${key}`,
      })
      expect(refusal(() => surchargeOf(body, [reached('gemini', SEARCH)], false))).toBeNull()
    }
  })

  test('function declarations are nothing extra; other kinds never receive Google tools', () => {
    expect(
      surchargeOf({ tools: [{ functionDeclarations: [] }] }, [reached('gemini', PLAIN)], true).calls,
    ).toEqual([])
    expect(surchargeOf({ tools: [{ googleSearch: {} }] }, [reached('openai', PLAIN)], true).calls).toEqual([])
  })
})
