/**
 * The AI SDK's `openai.responses(...)` in a multi-step tool loop (`generateText` with tools and
 * `stopWhen`) through the gateway to translated models. By default the SDK assumes OpenAI kept its
 * earlier answers (`store` defaults to true) and sends `item_reference`s to them: Switchyard keeps
 * none, so the step after the tools is a 400 that says so and what to set; with
 * `providerOptions.openai.store: false` the SDK sends the items and the loop completes.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { type ResponsesBed, startResponsesBed } from '../../support/responses-bed.ts'

const CLIENTS = join(import.meta.dir, '../../clients')
let ai: any = null
let provider: any = null
let bed: ResponsesBed
beforeAll(async () => {
  // The SDK warns that it skips reasoning it cannot send back (store: false): expected here.
  ;(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false
  try {
    ai = await import(Bun.resolveSync('ai', CLIENTS))
    provider = await import(Bun.resolveSync('@ai-sdk/openai', CLIENTS))
  } catch {
    console.log(
      'SKIPPED: test/e2e/clients/responses-ai-sdk.test.ts — ai not installed (npm install --prefix test/clients)',
    )
    return
  }
  bed = await startResponsesBed()
})
afterAll(() => bed?.stop())

/** A tool loop of two steps: the model's two calls (recorded: text, then two get_weather), then its answer. */
function loop(model: string, providerOptions?: Record<string, unknown>) {
  const openai = provider.createOpenAI({ baseURL: `${bed.gw.url}/v1`, apiKey: bed.key })
  return ai.generateText({
    model: openai.responses(model),
    prompt: 'The weather in Paris and London?',
    maxRetries: 0,
    stopWhen: ai.stepCountIs(2),
    tools: {
      get_weather: ai.tool({
        inputSchema: ai.jsonSchema({ type: 'object', properties: { city: { type: 'string' } } }),
        execute: async ({ city }: { city: string }) => `sunny in ${city}`,
      }),
    },
    ...(providerOptions ? { providerOptions } : {}),
  })
}

describe.each(['anthropic/two-tools', 'gemini/two-tools'])('%s', (model) => {
  test('store: false → two steps; the tool results reach the upstream after both calls', async () => {
    if (!ai) return
    const result = await loop(model, { openai: { store: false } })
    expect(result.steps.map((s: any) => s.toolCalls.length)).toEqual([2, 2])
    expect(result.steps[0].toolResults.map((r: any) => r.output)).toEqual([
      'sunny in Paris',
      'sunny in London',
    ])
    const sent = model.startsWith('anthropic')
      ? (bed.anthropic.lastRequest()!.body.messages as any[])
      : (bed.gemini.lastRequest()!.body.contents as any[])
    expect(JSON.stringify(sent.at(-1))).toContain('sunny in London')
  })

  test('the default (item references) → APICallError 400 naming the item and store: false', async () => {
    if (!ai) return
    const err = await loop(model).then(
      () => null,
      (e: unknown) => e as { statusCode?: number; message: string },
    )
    expect(ai.APICallError.isInstance(err)).toBe(true)
    expect(err!.statusCode).toBe(400)
    expect(err!.message).toContain('item_reference')
    expect(err!.message).toContain('store: false')
  })
})
