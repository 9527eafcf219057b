/** `/v1/models` and `switchyard models` state each model's prices, or that it is free (DESIGN §11). */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cli } from '../../support/cli.ts'
import {
  bearer,
  DEMO_PROVIDER,
  startGateway,
  type TestGateway,
  testConfigDoc,
} from '../../support/gateway.ts'

function pricedDoc() {
  const provider = structuredClone(DEMO_PROVIDER) as any
  provider.models[0].pricing = { input: 0.15, output: 0.6, cached_input: 0.075 }
  // echo-pro has no pricing: free.
  return testConfigDoc({ providers: [provider] })
}

let gw: TestGateway
beforeAll(async () => {
  gw = await startGateway({ doc: pricedDoc() })
})
afterAll(() => gw.stop())

describe('model prices', () => {
  test('/v1/models gives USD per 1M tokens with the billing defaults spelled out, or free', async () => {
    const { key } = await gw.key('pricey', 'pro')
    const body = (await (await fetch(`${gw.url}/v1/models`, { headers: bearer(key) })).json()) as any
    const echo = body.data.find((m: any) => m.id === 'demo/echo')
    expect(echo.free).toBe(false)
    expect(echo.pricing).toEqual({
      currency: 'USD',
      per_tokens: 1_000_000,
      input: 0.15,
      output: 0.6,
      cached_input: 0.075,
      cache_write: 0.15,
      reasoning: 0.6,
    })
    const pro = body.data.find((m: any) => m.id === 'demo/echo-pro')
    expect(pro.free).toBe(true)
    expect(pro.pricing).toBeNull()
    const one = (await (
      await fetch(`${gw.url}/v1/models/demo/echo-pro`, { headers: bearer(key) })
    ).json()) as any
    expect(one).toMatchObject({ id: 'demo/echo-pro', free: true, pricing: null })
  })

  test('switchyard models prints the price (or free) per model', async () => {
    const config = join(gw.dir, 'priced.yaml')
    writeFileSync(config, JSON.stringify(pricedDoc())) // JSON is YAML
    const base = ['--config', config, '--db', join(gw.dir, 'cli.db')]
    const text = await cli(['models', ...base])
    expect(text.code).toBe(0)
    const lines = text.stdout.split('\n')
    expect(lines[0]).toContain('PRICE')
    expect(lines.find((l) => l.startsWith('demo/echo '))).toContain(
      '$0.15 in / $0.60 out / $0.075 cached per 1M',
    )
    expect(lines.find((l) => l.startsWith('demo/echo-pro '))).toContain(' free ')
    const json = (await cli(['models', '--json', ...base])).json()
    expect(json.data.find((m: any) => m.id === 'demo/echo').pricing.output).toBe(0.6)
  })
})
