/**
 * The demo model reads a message in one pass (issue: three quadratic scans). Each hostile input
 * here is sized so that the old scans would run for many minutes (they took seconds at a tenth of
 * the size); the tool lookup counts its reads instead. Each test also pins the documented
 * behaviour the one-pass version keeps.
 */
import { describe, expect, test } from 'bun:test'
import type { ProviderConfig } from '../../../src/config/schema.ts'
import type { ChatCompletion, ChatRequest, FunctionTool } from '../../../src/operations/chat.ts'
import { createDemoAdapter } from '../../../src/providers/demo/index.ts'
import { firstJsonObject } from '../../../src/providers/demo/tools.ts'
import { callContext } from '../helpers.ts'

const provider: ProviderConfig = {
  prefix: 'demo',
  kind: 'demo',
  // A window past the largest hostile prompt here (4 MB ≈ 1.06 M tokens by the demo's count): these
  // tests time the reading, which the window check would otherwise cut short.
  models: [{ name: 'echo', context_window: 10_000_000, max_output_tokens: 64_000, features: ['tools'] }],
}
const demo = createDemoAdapter(provider)
const complete = (r: ChatRequest): Promise<ChatCompletion> => demo.complete(r, callContext(provider))
const user = (content: string, extra: Partial<ChatRequest> = {}): ChatRequest => ({
  model: 'echo',
  messages: [{ role: 'user', content }],
  ...extra,
})
const TOOLS: FunctionTool[] = [{ type: 'function', function: { name: 'get_weather' } }]

describe('the first JSON object in the message', () => {
  test('2 MB of nested braces with a tool: one pass (80 KB took 3.3 s)', async () => {
    const braces = `${'{'.repeat(1_000_000)}${'}'.repeat(1_000_000)}`
    expect(firstJsonObject(braces)).toBeUndefined()
    const res = await complete(user(`get_weather ${braces}`, { tools: TOOLS }))
    expect(res.choices[0]!.message.tool_calls![0]!.function.arguments).toBe('{}')
  }, 30_000)

  test('unclosed objects and strings: one pass', () => {
    expect(firstJsonObject('{"a":'.repeat(300_000))).toBeUndefined()
    expect(firstJsonObject(`${'{"'.repeat(300_000)}`)).toBeUndefined()
  }, 30_000)

  test('still the first `{…}` that is a JSON object, strings and escapes read as JSON', () => {
    expect(firstJsonObject('get_weather {"city": "Oslo"}')).toBe('{"city":"Oslo"}')
    expect(firstJsonObject('use {braces} then {"a": 1} and {"b": 2}')).toBe('{"a":1}')
    expect(firstJsonObject('{"s": "a } { \\" brace"}')).toBe('{"s":"a } { \\" brace"}')
    expect(firstJsonObject('{"nested": {"x": [1, {"y": 2}]}} tail')).toBe('{"nested":{"x":[1,{"y":2}]}}')
    expect(firstJsonObject('no object here')).toBeUndefined()
    expect(firstJsonObject('{"a": 1')).toBeUndefined()
  })
})

describe('system reminders', () => {
  test('4 MB of unclosed <system-reminder> tags: one pass (400 KB took 5.7 s)', async () => {
    const res = await complete(user('<system-reminder>'.repeat(250_000)))
    expect(res.choices[0]!.message.content).toStartWith('Echo: <system-reminder><system-reminder>')
  }, 30_000)

  test('closed ones are still dropped from what the demo echoes', async () => {
    const res = await complete(
      user('<system-reminder>env</system-reminder>hello <system-reminder>a\nb</system-reminder>there'),
    )
    expect(res.choices[0]!.message.content).toBe('Echo: hello there')
    const open = await complete(user('hi <system-reminder>x</system-reminder> <system-reminder>unclosed'))
    expect(open.choices[0]!.message.content).toBe('Echo: hi  <system-reminder>unclosed')
  })
})

describe('tools named in the message', () => {
  test('each tool name is read a bounded number of times (24,000 tools took 2.45 s)', async () => {
    let reads = 0
    const tools: FunctionTool[] = Array.from({ length: 3_000 }, (_, i) => {
      const fn = { parameters: { type: 'object' } } as unknown as FunctionTool['function']
      Object.defineProperty(fn, 'name', {
        enumerable: true,
        get: () => {
          reads++
          return `t${i}`
        },
      })
      return { type: 'function', function: fn }
    })
    const text = tools.map((_, i) => `t${i}`).join(' ')
    const res = await complete(user(text, { tools }))
    const calls = res.choices[0]!.message.tool_calls!
    expect(calls.length).toBe(3_000)
    expect(calls.at(-1)!.function.name).toBe('t2999')
    // The old lookup read names 4.5 million times (a scan of the list per call).
    expect(reads).toBeLessThan(10 * tools.length)
  })

  test('calls in the order of the tool list; a name given twice is called once', async () => {
    const tools: FunctionTool[] = ['b', 'a', 'b'].map((name) => ({ type: 'function', function: { name } }))
    const res = await complete(user('a and b', { tools }))
    expect(res.choices[0]!.message.tool_calls!.map((c) => c.function.name)).toEqual(['b', 'a'])
  })
})
