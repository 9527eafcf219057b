/**
 * Output reservations that grow (DESIGN §11, issue 41): an uncapped request holds a first slice of
 * output, not the model's whole maximum, so several run side by side on one key; the upstream is
 * sent the most the limits could cover; a successful answer's `x-ratelimit-remaining-tokens` says
 * what is really left. On `serve --workers 2` (SQLite) and two replicas on PostgreSQL (+ Redis),
 * against an upstream that bills like the real one.
 */
import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { type BackendUrls, backendDoc, backends } from '../support/backends.ts'
import { type BillingUpstream, startBillingUpstream } from '../support/billing-upstream.ts'
import { cli } from '../support/cli.ts'
import { tempDir } from '../support/config-doc.ts'
import { afterEach } from '../support/hooks.ts'
import { type ServeProcess, spawnServe, writeConfig } from '../support/process.ts'
import { tokensDoc } from '../support/tokens-bed.ts'

const running: ServeProcess[] = []
let upstream: BillingUpstream | undefined
afterEach(async () => {
  for (const p of running.splice(0)) await p.kill('SIGKILL')
  await upstream?.stop()
  upstream = undefined
})

/** The model's maximum output: the 32,000. */
const MODEL_MAX = 32_000

/** A gateway (`--workers 2` on SQLite, two replicas elsewhere) with `bill/m` at a 32,000-token maximum, the account on TPM `tpm`. */
async function setup(urls: BackendUrls, tpm: number, answerTokens: number, chunkDelayMs: number) {
  upstream = await startBillingUpstream({ answerTokens, chunkDelayMs, defaultMax: MODEL_MAX })
  const dir = tempDir()
  const base = tokensDoc(upstream.url, { metered: { rpm: null, rpd: null, tpm, models: ['*'] } })
  const providers = (base.providers as Array<Record<string, any>>).map((p) =>
    p.prefix === 'bill' ? { ...p, models: [{ ...p.models[0], max_output_tokens: MODEL_MAX }] } : p,
  )
  const doc = backendDoc(
    { ...base, providers, database: { path: join(dir, 'shared.db') }, usage: { flush_ms: 25 } },
    urls,
  )
  const args = ['--config', writeConfig(dir, doc)]
  expect((await cli(['accounts', 'create', 'acct', '--plan', 'metered', ...args])).code).toBe(0)
  const key = (await cli(['keys', 'create', 'acct', '--json', ...args])).json().key as string
  const procs = urls.databaseUrl
    ? await Promise.all([0, 1].map(() => spawnServe(['--port', '0', ...args])))
    : [await spawnServe(['--workers', '2', '--port', '0', ...args])]
  running.push(...procs)
  return { key, procs }
}

const ask = (url: string, key: string, stream: boolean) =>
  fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'bill/m',
      messages: [{ role: 'user', content: 'write five hundred words about anything at all' }],
      stream,
      ...(stream ? { stream_options: { include_usage: true } } : {}),
    }),
  })

/** The completion tokens of a chat answer, streamed (its usage chunk) or not. */
async function completionTokens(r: Response, stream: boolean): Promise<number> {
  if (!stream) return ((await r.json()) as any).usage.completion_tokens
  const text = await r.text()
  const usage = text
    .split('\n')
    .filter((l) => l.startsWith('data: {'))
    .map((l) => JSON.parse(l.slice(6)))
    .find((c) => c.usage)?.usage
  return usage.completion_tokens
}

for (const backend of backends('tokens-growth.test.ts')) {
  const where = backend.name === 'sqlite' ? '`serve --workers 2`' : 'two replicas'
  describe.skipIf(backend.skip)(`[${backend.name}]`, () => {
    test(`${where}: five uncapped 500-token answers at once on TPM 100,000 and a 32,000-token model all complete, and say what is left`, async () => {
      const { key, procs } = await setup(await backend.fresh(), 100_000, 500, 5)
      const res = await Promise.all(
        Array.from({ length: 5 }, async (_, i) => {
          const stream = i % 2 === 0
          const r = await ask(procs[i % procs.length]!.url, key, stream)
          const remaining = Number(r.headers.get('x-ratelimit-remaining-tokens'))
          if (r.status !== 200) await r.text()
          const tokens = r.status === 200 ? await completionTokens(r, stream) : 0
          return { status: r.status, remaining, tokens, cap: r.headers.get('x-switchyard-max-tokens') }
        }),
      )
      expect(res.map((r) => r.status)).toEqual([200, 200, 200, 200, 200])
      expect(res.map((r) => r.tokens)).toEqual([500, 500, 500, 500, 500])
      // Each held its input and a first slice while it ran, not 32,000: what is left is most of it.
      for (const r of res) expect(r.remaining).toBeGreaterThan(100_000 - 5 * (4_096 + 400))
      // The upstream may still generate the model's maximum: the limits could cover it.
      expect(upstream!.caps).toEqual([MODEL_MAX, MODEL_MAX, MODEL_MAX, MODEL_MAX, MODEL_MAX])
      expect(upstream!.billed.tokens).toBeLessThanOrEqual(100_000)
    })

    test(`${where}: an uncapped request is sent the most the limits could cover, and its answer ends as length within them`, async () => {
      const { key, procs } = await setup(await backend.fresh(), 10_000, 20_000, 0)
      const r = await ask(procs[0]!.url, key, true)
      expect(r.status).toBe(200)
      const cap = Number(r.headers.get('x-switchyard-max-tokens'))
      expect(r.headers.get('x-switchyard-max-tokens-reason')).toBe('account:tokens:minute')
      const text = await r.text()
      expect(text).toContain('"finish_reason":"length"')
      expect(upstream!.caps).toEqual([cap])
      expect(cap).toBeGreaterThan(9_000)
      expect(upstream!.billed.tokens).toBeLessThanOrEqual(10_000)
    })
  })
}
