/**
 * The pass-through's upstream headers (`forward`): built once per adapter and sent as they are when
 * nothing is added to them; a call that adds client headers gets a copy of its own, so what one
 * call adds never reaches another.
 */
import { describe, expect, test } from 'bun:test'
import { SplicedText } from '../../../src/json/spliced.ts'
import { API_KEY, openAITestbed, request } from './setup.ts'

const bed = openAITestbed()
const chat = (headers: Record<string, string> = {}) => ({
  path: '/chat/completions',
  body: JSON.stringify(request()),
  headers,
})

/** `new Headers` calls made while `run` runs (the adapter's, through the global). */
async function headersMade(run: () => Promise<unknown>): Promise<number> {
  const Real = globalThis.Headers
  let made = 0
  globalThis.Headers = class extends Real {
    constructor(init?: ConstructorParameters<typeof Headers>[0]) {
      super(init)
      made++
    }
  } as typeof Headers
  try {
    await run()
  } finally {
    globalThis.Headers = Real
  }
  return made
}

describe('openai adapter, pass-through headers', () => {
  test('a call with no client headers sends the adapter’s own, without a copy a request', async () => {
    const { adapter, ctx } = bed.adapterCall()
    const made = await headersMade(async () => {
      for (let i = 0; i < 3; i++) expect((await adapter.forward!(chat(), ctx)).status).toBe(200)
    })
    expect(made).toBe(0)
    const sent = bed.mock.stats.lastHeaders
    expect(sent.authorization).toBe(`Bearer ${API_KEY}`)
    expect(sent['openai-organization']).toBe('org-test')
    expect(sent['content-type']).toBe('application/json')
    expect(sent.accept).toBe('application/json, text/event-stream')
  })

  test('the pass-through’s accept stands over a provider header of that name, as before', async () => {
    const p = bed.provider({ headers: { Accept: 'text/plain' } })
    const { adapter, ctx } = bed.adapterCall({ provider: p })
    await adapter.forward!(chat(), ctx)
    expect(bed.mock.stats.lastHeaders.accept).toBe('application/json, text/event-stream')
  })

  test('client headers go on a copy: the next call does not carry them', async () => {
    const { adapter, ctx } = bed.adapterCall()
    await adapter.forward!(chat({ 'x-client-beta': 'on' }), ctx)
    expect(bed.mock.stats.lastHeaders['x-client-beta']).toBe('on')
    expect(bed.mock.stats.lastHeaders.authorization).toBe(`Bearer ${API_KEY}`)
    await adapter.forward!(chat(), ctx)
    expect(bed.mock.stats.lastHeaders['x-client-beta']).toBeUndefined()
  })

  test('a spliced body gets its own copy: its content-length never stays on the shared headers', async () => {
    const { adapter, ctx } = bed.adapterCall()
    const body = JSON.stringify(request())
    const half = body.length >> 1
    const spliced = {
      path: '/chat/completions',
      body: new SplicedText([body.slice(0, half), body.slice(half)]),
      headers: {},
    }
    const made = await headersMade(async () => {
      expect((await adapter.forward!(spliced, ctx)).status).toBe(200)
    })
    expect(made).toBe(1)
    expect(bed.mock.stats.lastHeaders['content-length']).toBe(String(Buffer.byteLength(body)))
    // The next plain call sends the shared headers again, without a copy.
    expect(await headersMade(async () => (await adapter.forward!(chat(), ctx)).status)).toBe(0)
  })
})
