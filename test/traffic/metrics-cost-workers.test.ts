/**
 * Tokens and cost in `/metrics` under `serve --workers 2` (DESIGN §11): whichever process answers a
 * scrape, the token and micro-dollar counters by model are the sums of what every process served,
 * and equal what the responses reported at the model's price.
 */
import { afterAll, expect, test } from 'bun:test'
import { getMetricsFromIterator, type PromMetric } from 'prom2javascript'
import { cli } from '../support/cli.ts'
import { DEMO_PROVIDER, tempDir, testConfigDoc } from '../support/config-doc.ts'
import { type ServeProcess, spawnServe, writeConfig } from '../support/process.ts'

const procs: ServeProcess[] = []
afterAll(() => {
  for (const p of procs) p.proc.kill('SIGKILL')
})

const close = { connection: 'close' }

async function scrape(url: string): Promise<Map<string, PromMetric>> {
  const text = await (await fetch(`${url}/metrics`, { headers: close })).text()
  return new Map(Object.entries(await getMetricsFromIterator(text.split('\n')[Symbol.iterator]())))
}

const sum = (f: PromMetric | undefined, where: Record<string, string>) =>
  ((f?.data ?? []) as Array<{ labels: Record<string, string>; value: number }>)
    .filter((m) => Object.entries(where).every(([k, v]) => m.labels[k] === v))
    .reduce((n, m) => n + m.value, 0)

test('token and cost counters by model are exact across 2 workers', async () => {
  const provider = structuredClone(DEMO_PROVIDER) as any
  provider.models[0].pricing = { input: 3, output: 7 } // micro-dollars per token: 3 in, 7 out
  const base = ['--config', writeConfig(tempDir(), testConfigDoc({ providers: [provider] }))]
  expect((await cli(['accounts', 'create', 'm', '--plan', 'unlimited', ...base])).code).toBe(0)
  const key = (await cli(['keys', 'create', 'm', '--json', ...base])).json().key as string
  const serve = await spawnServe(['--workers', '2', '--port', '0', ...base])
  procs.push(serve)

  const billed = { prompt: 0, completion: 0, micros: 0, free: 0 }
  const send = async (i: number) => {
    const model = i % 4 === 0 ? 'demo/echo-pro' : 'demo/echo'
    const res = await fetch(`${serve.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...close, authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: `hello ${'x '.repeat(i)}` }] }),
    })
    const u = ((await res.json()) as any).usage
    if (model === 'demo/echo-pro') billed.free += u.prompt_tokens + u.completion_tokens
    else {
      billed.prompt += u.prompt_tokens
      billed.completion += u.completion_tokens
      billed.micros += u.prompt_tokens * 3 + u.completion_tokens * 7
    }
  }
  for (let round = 0; round < 5; round++)
    await Promise.all(Array.from({ length: 8 }, (_, j) => send(round * 8 + j)))

  // A request is counted once its response has gone out; scrape (briefly) until all are in.
  let families = await scrape(serve.url)
  for (let tries = 0; tries < 40; tries++) {
    if (sum(families.get('switchyard_cost_microdollars_total'), { model: 'demo/echo' }) === billed.micros)
      break
    await Bun.sleep(25)
    families = await scrape(serve.url)
  }
  expect(sum(families.get('switchyard_processes'), {})).toBe(2)
  const cost = families.get('switchyard_cost_microdollars_total')
  expect(cost?.type).toBe('counter')
  expect(sum(cost, { surface: 'chat', model: 'demo/echo' })).toBe(billed.micros)
  // A free model adds no cost series.
  expect(sum(cost, { model: 'demo/echo-pro' })).toBe(0)
  const tokens = families.get('switchyard_tokens_total')
  expect(sum(tokens, { model: 'demo/echo', type: 'prompt' })).toBe(billed.prompt)
  expect(sum(tokens, { model: 'demo/echo', type: 'completion' })).toBe(billed.completion)
  expect(sum(tokens, { model: 'demo/echo-pro' })).toBe(billed.free)
}, 60_000)
