/**
 * Truthful refusals and one ledger (DESIGN §11, issue 41), on every backend.
 *
 * A refusal says what is true of the row that refused: money or tokens only HELD by a request still
 * in flight are not "spent" (402/429 saying so, `retry-after` ≤ 60 s and `x-should-retry: true`);
 * a budget is "spent" only when its settled spend reached it (retry-after = the period's end);
 * one with money left, less than this request needs at least, says both amounts (retry-after =
 * the period's end: this request fits no sooner; a smaller one fits now); one whose left money
 * fits this request with a lower max_tokens says how much is left and that max_tokens. `/v1/usage` shows `reserved_usd` / `reserved` tokens apart
 * from what is spent and used (settled). A fallback's cost belongs to the fallback: usage by
 * model, `/metrics` and the console's series.
 *
 * A real local upstream that bills (billing-upstream.ts) answers every priced model; a stream is
 * held in flight after its first chunk (`gate`) while the test looks. A dead provider (nothing
 * listens on its port) makes the free model fall back.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { formatUsd } from '../../../src/limits/pricing.ts'
import { type Backend, backends } from '../../support/backends.ts'
import { type BillingUpstream, startBillingUpstream } from '../../support/billing-upstream.ts'
import { ADMIN_TOKEN, bearer, startGateway, type TestGateway } from '../../support/gateway.ts'

const all = backends('ledger-truth.test.ts')

// USD per 1M tokens: a token costs that many micro-dollars.
const PRICES = {
  m4: { input: 1, output: 4 },
  m1: { input: 1, output: 1 },
  fb: { input: 2, output: 3 },
  cut: { input: 1, output: 2 },
  pf: { input: 3, output: 5 },
}
const TEXT = 'please count these words for the billing upstream which bills one token for each word it sees'

/** Resolves the gate a held stream waits on. */
let release: () => void = () => {}
/**
 * The next upstream stream is held (`held`): one-shot, since under a token or money limit a JSON
 * answer is streamed from the upstream too (pipeline/output-cut.ts) and must not wait on the gate.
 */
let holding = false

/** One gateway per backend; each test its own accounts, and the upstream's bill read as a difference. */
async function start(b: Backend): Promise<{ gw: TestGateway; up: BillingUpstream }> {
  const up = await startBillingUpstream({
    answerTokens: 4_096,
    // `cut`'s streams break after 100 tokens: continued on `pf` (prefill).
    fault: (m) => (m === 'cut' ? { cut: 100 } : undefined),
    gate: () => {
      if (!holding) return Promise.resolve()
      holding = false
      return new Promise<void>((r) => (release = r))
    },
  })
  const model = (name: keyof typeof PRICES, extra: Record<string, unknown> = {}) => ({
    name,
    context_window: 128_000,
    max_output_tokens: 4_096,
    features: ['streaming', 'system_messages'],
    pricing: PRICES[name],
    ...extra,
  })
  const open = { rpm: null, rpd: null, models: ['*'] }
  const gw = await startGateway({
    backend: await b.fresh(),
    doc: {
      server: { host: '127.0.0.1', port: 0 },
      admin: { token: ADMIN_TOKEN },
      providers: [
        {
          prefix: 'bill',
          kind: 'openai',
          base_url: up.url,
          api_key: 'sk-upstream',
          models: [
            model('m4'),
            model('m1'),
            model('fb'),
            model('cut', { fallbacks: ['bill/pf'] }),
            model('pf', { features: ['streaming', 'system_messages', 'prefill'] }),
          ],
        },
        {
          // Nothing listens on port 1: every call is refused, and the free model falls back.
          prefix: 'dead',
          kind: 'openai',
          base_url: 'http://127.0.0.1:1/v1',
          api_key: 'sk-dead',
          retry: { attempts: 0 },
          models: [
            {
              name: 'free',
              context_window: 128_000,
              max_output_tokens: 4_096,
              features: ['streaming', 'system_messages'],
              fallbacks: ['bill/fb'],
            },
          ],
        },
      ],
      plans: {
        free: open,
        tokens4k: { ...open, tpm: 4_000 },
        budget16k: { ...open, budget: { usd: 0.016, period: 'month' } },
        budget1k: { ...open, budget: { usd: 0.001, period: 'month' } },
        budget2k: { ...open, budget: { usd: 0.002, period: 'month' } },
      },
      default_plan: 'free',
    },
  })
  return { gw, up }
}

function chat(url: string, key: string, model: string, max: number, stream = false): Promise<Response> {
  return fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json' },
    body: JSON.stringify({
      model,
      messages: [{ role: 'user', content: TEXT }],
      max_completion_tokens: max,
      stream,
      ...(stream ? { stream_options: { include_usage: true } } : {}),
    }),
  })
}

async function usage(url: string, key: string): Promise<any> {
  return (await fetch(`${url}/v1/usage`, { headers: bearer(key) })).json()
}

/** A stream admitted and held in flight (its first chunk read); `finish` releases and drains it. */
async function held(url: string, key: string, model: string, max: number) {
  holding = true
  const res = await chat(url, key, model, max, true)
  expect(res.status).toBe(200)
  const reader = res.body!.getReader()
  let text = ''
  while (!text.includes('"content":"w')) text += new TextDecoder().decode((await reader.read()).value)
  return {
    async finish() {
      release()
      while (!(await reader.read()).done) {}
    },
  }
}

/**
 * Polls /v1/usage until `done` holds of it (the usage flush settles the ended requests), for as
 * long as a loaded machine may take (the test's own timeout bounds it).
 */
async function settledUsage(url: string, key: string, done: (u: any) => boolean): Promise<any> {
  const deadline = performance.now() + 20_000
  for (;;) {
    const u = await usage(url, key)
    if (done(u) || performance.now() > deadline) return u
    await Bun.sleep(25)
  }
}

const periodEndS = (now: number) => {
  const d = new Date(now)
  return Math.ceil((Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) - now) / 1000)
}

/** What the upstream billed since `before` (a copy of `up.billed`). */
const since = (up: BillingUpstream, before: BillingUpstream['billed']) => ({
  input: up.billed.input - before.input,
  output: up.billed.output - before.output,
  tokens: up.billed.tokens - before.tokens,
})

for (const b of all) {
  describe.skipIf(b.skip)(`truthful refusals and one ledger, on ${b.name}`, () => {
    let gw: TestGateway
    let up: BillingUpstream
    beforeAll(async () => {
      ;({ gw, up } = await start(b))
    }, 30_000)
    afterAll(async () => {
      release()
      await gw?.stop()
      await up?.stop()
    })
    test('money held by a request in flight: 402 says so, a short retry-after, x-should-retry; /v1/usage shows it reserved, then spent', async () => {
      const before = { ...up.billed }
      const { key } = await gw.key('held-money', 'budget16k')
      // Holds its input bound + 3,800 × 4 micro-dollars of a $0.016 budget while it runs.
      const a = await held(gw.url, key, 'bill/m4', 3_800)
      const during = await usage(gw.url, key)
      expect(during.budget.spent_usd).toBe(0)
      expect(during.budget.reserved_usd).toBeGreaterThan(0.0152)
      expect(during.budget.remaining_usd).toBeCloseTo(0.016 - during.budget.reserved_usd, 9)

      const refused = await chat(gw.url, key, 'bill/m4', 3_800)
      const body = (await refused.json()) as any
      expect(refused.status).toBe(402)
      expect(body.error.code).toBe('budget_exceeded')
      expect(body.error.message).toContain('is not spent: $0.00 of $0.016 spent')
      expect(body.error.message).toContain('held by requests still in flight')
      expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60)
      expect(refused.headers.get('x-should-retry')).toBe('true')
      // Messages: the same refusal as Anthropic's billing_error.
      const messages = await fetch(`${gw.url}/v1/messages`, {
        method: 'POST',
        headers: { ...bearer(key), 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'bill/m4',
          messages: [{ role: 'user', content: TEXT }],
          max_tokens: 3_800,
        }),
      })
      const error = ((await messages.json()) as any).error
      expect(messages.status).toBe(402)
      expect(error.type).toBe('billing_error')
      expect(error.message).toContain('held by requests still in flight')
      expect(Number(messages.headers.get('retry-after'))).toBeLessThanOrEqual(60)
      expect(messages.headers.get('x-should-retry')).toBe('true')

      await a.finish()
      const billed = since(up, before)
      const cost = billed.input * 1 + billed.output * 4
      const after = await settledUsage(gw.url, key, (u) => u.budget.reserved_usd === 0)
      expect(after.budget.reserved_usd).toBe(0)
      expect(after.budget.spent_usd).toBe(cost / 1e6)
      expect(after.budget.remaining_usd).toBe((16_000 - cost) / 1e6)
    })

    test('a key’s own budget held by its request in flight: the refusal and the key’s figures say so', async () => {
      await gw.deps.accounts.createAccount('held-key', 'free')
      const made = await gw.deps.accounts.createKey('held-key', 'own', {
        budget: { usd: 0.016, period: 'day' },
      })
      const a = await held(gw.url, made.key, 'bill/m4', 3_800)
      const own = (await usage(gw.url, made.key)).account_information.key.rate_limits.budget
      expect(own).toMatchObject({ scope: 'key', spent_usd: 0 })
      expect(own.reserved_usd).toBeGreaterThan(0.0152)
      const refused = await chat(gw.url, made.key, 'bill/m4', 3_800)
      const body = (await refused.json()) as any
      expect(refused.status).toBe(402)
      expect(body.error.message).toContain('daily budget of this key is not spent')
      expect(refused.headers.get('x-should-retry')).toBe('true')
      await a.finish()
      const after = await settledUsage(
        gw.url,
        made.key,
        (u) => u.account_information.key.rate_limits.budget.reserved_usd === 0,
      )
      expect(after.account_information.key.rate_limits.budget.spent_usd).toBeGreaterThan(0.0152)
    })

    test('tokens held by a request in flight: 429 says so, x-should-retry; /v1/usage shows them reserved, then used', async () => {
      const before = { ...up.billed }
      const { key } = await gw.key('held-tokens', 'tokens4k')
      const a = await held(gw.url, key, 'bill/m4', 3_800)
      const during = await usage(gw.url, key)
      expect(during.usage.current_minute.tokens).toBe(0)
      expect(during.usage.current_minute.reserved_tokens).toBeGreaterThan(3_800)
      expect(during.rate_limits.tokens_minute.used).toBe(0)
      expect(during.rate_limits.tokens_minute.reserved).toBe(during.usage.current_minute.reserved_tokens)
      expect(during.rate_limits.tokens_minute.remaining).toBe(
        4_000 - during.rate_limits.tokens_minute.reserved,
      )

      const refused = await chat(gw.url, key, 'bill/m4', 3_800)
      const body = (await refused.json()) as any
      expect(refused.status).toBe(429)
      expect(body.error.code).toBe('rate_limit_exceeded')
      expect(body.error.message).toContain('held by requests still in flight')
      expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60)
      expect(refused.headers.get('x-should-retry')).toBe('true')

      await a.finish()
      const after = await settledUsage(gw.url, key, (u) => u.usage.current_minute.reserved_tokens === 0)
      const billed = since(up, before).tokens
      expect(after.usage.current_minute).toMatchObject({ tokens: billed, reserved_tokens: 0 })
      expect(after.rate_limits.tokens_minute).toMatchObject({ used: billed, reserved: 0 })
    })

    test('refusals for holds in flight do not count toward a suspension; refusals for what was used do', async () => {
      // The default policy: more than 50 refusals in 600 s suspend the key for 900 s.
      const { key } = await gw.key('holds-not-suspended', 'tokens4k')
      const a = await held(gw.url, key, 'bill/m4', 3_800)
      const statuses: string[] = []
      for (let i = 0; i < 60; i++) {
        const r = await chat(gw.url, key, 'bill/m4', 3_800)
        statuses.push(`${r.status} ${r.headers.get('x-should-retry')}`)
        await r.arrayBuffer()
      }
      expect(statuses).toEqual(Array(60).fill('429 true'))
      await a.finish()
      await settledUsage(gw.url, key, (u) => u.usage.current_minute.reserved_tokens === 0)
      // Not suspended: what the ended request used leaves room for a small one.
      const small = await chat(gw.url, key, 'bill/m4', 10)
      expect(small.status).toBe(200)
      await small.text()
      // What is used (settled) refuses this one: each such refusal counts, and the 51st suspends.
      for (let i = 0; i < 51; i++) {
        const r = await chat(gw.url, key, 'bill/m4', 3_800)
        expect(`${r.status} ${r.headers.get('x-should-retry')}`).toBe('429 null')
        await r.arrayBuffer()
      }
      const suspended = await chat(gw.url, key, 'bill/m4', 10)
      expect(suspended.status).toBe(403)
      expect(((await suspended.json()) as any).error.code).toBe('key_suspended')
    })

    test('money left, less than this request needs at least: 402 says both amounts, never "spent"; a smaller request fits', async () => {
      const { key } = await gw.key('short', 'budget1k')
      // Spends about half of the $0.001: its input and 500 output tokens at $1 per 1M.
      const first = await chat(gw.url, key, 'bill/m1', 500)
      expect(first.status).toBe(200)
      const { usage: billed } = (await first.json()) as any
      const spent = billed.prompt_tokens + billed.completion_tokens
      expect(spent).toBeLessThan(600)
      // A 700-word input alone costs more than what is left (its bound: at least a token a word).
      const now = Date.now()
      const refused = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { ...bearer(key), 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'bill/m1',
          messages: [{ role: 'user', content: 'w '.repeat(700) }],
          max_completion_tokens: 10,
        }),
      })
      const body = (await refused.json()) as any
      expect(refused.status).toBe(402)
      expect(body.error.message).toStartWith(
        `What is left of the monthly budget of the account cannot cover this request: ${formatUsd(1_000 - spent)} left of $0.001 (${formatUsd(spent)} spent), and this request needs at least $`,
      )
      const needs = Number(/needs at least \$([0-9.]+)/.exec(body.error.message)![1])
      expect(needs).toBeGreaterThan((1_000 - spent) / 1e6)
      expect(body.error.message).not.toContain('is spent')
      expect(body.error.message).not.toContain('in flight')
      // The same request fits no sooner than the period's end (settled spend only grows until then).
      const wait = Number(refused.headers.get('retry-after'))
      expect(Math.abs(wait - periodEndS(now))).toBeLessThanOrEqual(5)
      expect(refused.headers.get('x-should-retry')).toBe('false')
      // A smaller one fits now.
      const small = await chat(gw.url, key, 'bill/m1', 10)
      expect(small.status).toBe(200)
      await small.text()
    })

    test('a budget its settled spend reached: 402 says it is spent, retry-after until the period ends', async () => {
      await gw.deps.accounts.createAccount('spent', 'free')
      const made = await gw.deps.accounts.createKey('spent', 'own', {
        budget: { usd: 0.016, period: 'month' },
      })
      const first = await chat(gw.url, made.key, 'bill/m1', 500)
      expect(first.status).toBe(200)
      const { usage: billed } = (await first.json()) as any
      const spent = billed.prompt_tokens + billed.completion_tokens
      await settledUsage(
        gw.url,
        made.key,
        (u) => u.account_information.key.rate_limits.budget.spent_usd === spent / 1e6,
      )
      // Lowered below what it spent, above what the next request needs at least.
      await gw.deps.accounts.setKeyLimits(made.id, { budget: { usd: 0.0002 } })
      const now = Date.now()
      const refused = await chat(gw.url, made.key, 'bill/m1', 10)
      const body = (await refused.json()) as any
      expect(refused.status).toBe(402)
      expect(body.error.message).toStartWith(
        `The monthly budget of this key is spent: ${formatUsd(spent)} of $0.0002 used, and this request needs at least`,
      )
      const wait = Number(refused.headers.get('retry-after'))
      expect(Math.abs(wait - periodEndS(now))).toBeLessThanOrEqual(5)
      expect(refused.headers.get('x-should-retry')).toBe('false')
    })

    test('too little left for this request: 402 says how much is left and the max_tokens that fits', async () => {
      // The input bound of this body: what a clamp to the budget leaves out of $0.002.
      const probe = await gw.key('probe', 'budget2k')
      const first = await chat(gw.url, probe.key, 'bill/m1', 4_000)
      expect(first.status).toBe(200)
      const bound = 2_000 - Number(first.headers.get('x-switchyard-max-tokens'))
      const input = ((await first.json()) as any).usage.prompt_tokens as number
      // Spends all but the bound + 100 micro-dollars: 100 output tokens fit after the input, 256 do not.
      const { key } = await gw.key('lower', 'budget2k')
      const spend = await chat(gw.url, key, 'bill/m1', 2_000 - input - bound - 100)
      expect(spend.status).toBe(200)
      await spend.text()
      const refused = await chat(gw.url, key, 'bill/m1', 4_000)
      const body = (await refused.json()) as any
      expect(refused.status).toBe(402)
      expect(body.error.message).toContain('cannot cover this request')
      expect(body.error.message).toContain(`${formatUsd(bound + 100)} left of $0.002`)
      expect(body.error.message).toContain('A lower max_tokens (at most 100) would fit')
      const fits = await chat(gw.url, key, 'bill/m1', 100)
      expect(fits.status).toBe(200)
      await fits.text()
    })

    test('a fallback’s cost is the fallback’s: usage by model, /metrics, the console’s series', async () => {
      const { key } = await gw.key('fallback', 'free')
      const res = await chat(gw.url, key, 'dead/free', 50)
      expect(res.status).toBe(200)
      await res.text()
      expect(up.byModel.fb).toBeDefined()
      const cost = up.byModel.fb!.input * 2 + up.byModel.fb!.output * 3
      const u = await settledUsage(gw.url, key, (x) => x.usage.today.cost_usd > 0)
      expect(u.usage.by_model['bill/fb']).toMatchObject({
        prompt_tokens: up.byModel.fb!.input,
        completion_tokens: up.byModel.fb!.output,
        cost_usd: cost / 1e6,
      })
      expect(u.usage.by_model['dead/free']).toMatchObject({ requests: 1, total_tokens: 0, cost_usd: 0 })
      const metrics = await (await fetch(`${gw.url}/metrics`)).text()
      expect(metrics).toContain(`switchyard_cost_microdollars_total{surface="chat",model="bill/fb"} ${cost}`)
      expect(metrics).not.toContain('switchyard_cost_microdollars_total{surface="chat",model="dead/free"}')
      const series = (await (
        await fetch(`${gw.url}/admin/v1/usage/series?group_by=model&account=fallback`, {
          headers: bearer(ADMIN_TOKEN),
        })
      ).json()) as any
      const costOf = (group: string) =>
        (series.series.find((s: any) => s.group === group)?.points ?? []).reduce(
          (n: number, p: any) => n + p.cost_usd,
          0,
        )
      expect(costOf('bill/fb')).toBe(cost / 1e6)
      expect(costOf('dead/free')).toBe(0)
      // The request log: the model asked for, the one that answered, and the cost it was billed.
      const log = (await (
        await fetch(`${gw.url}/admin/v1/requests?account=fallback`, { headers: bearer(ADMIN_TOKEN) })
      ).json()) as any
      expect(log.data).toHaveLength(1)
      expect(log.data[0]).toMatchObject({ model: 'dead/free', answered_by: 'bill/fb', cost_usd: cost / 1e6 })
    })

    test('a continued stream: each part’s tokens and cost under the model that produced it; the log row holds both', async () => {
      const { key } = await gw.key('continued', 'budget16k')
      const before = {
        cut: { ...(up.byModel.cut ?? { input: 0, output: 0 }) },
        pf: { ...(up.byModel.pf ?? { input: 0, output: 0 }) },
      }
      const res = await chat(gw.url, key, 'bill/cut', 300, true)
      expect(res.status).toBe(200)
      const text = await res.text()
      expect(text).toContain('[DONE]')
      const pf = {
        input: up.byModel.pf!.input - before.pf.input,
        output: up.byModel.pf!.output - before.pf.output,
      }
      const cut = {
        input: up.byModel.cut!.input - before.cut.input,
        output: up.byModel.cut!.output - before.cut.output,
      }
      expect(pf.output).toBeGreaterThan(0)
      const u = await settledUsage(
        gw.url,
        key,
        (x) => x.budget.reserved_usd === 0 && x.usage.today.total_tokens > 0,
      )
      const first = u.usage.by_model['bill/cut']
      const rest = u.usage.by_model['bill/pf']
      // The continuation's part is what its upstream billed; the first part the gateway's count of
      // what it relayed (never below what the first upstream billed).
      expect(rest).toMatchObject({ requests: 0, prompt_tokens: pf.input, completion_tokens: pf.output })
      expect(rest.cost_usd).toBe((pf.input * 3 + pf.output * 5) / 1e6)
      expect(first.requests).toBe(1)
      expect(first.prompt_tokens).toBeGreaterThanOrEqual(cut.input)
      expect(first.completion_tokens).toBeGreaterThanOrEqual(cut.output)
      expect(first.cost_usd).toBe((first.prompt_tokens * 1 + first.completion_tokens * 2) / 1e6)
      expect(u.usage.today.total_tokens).toBe(first.total_tokens + rest.total_tokens)
      expect(u.budget.spent_usd).toBeCloseTo(first.cost_usd + rest.cost_usd, 12)
      // /metrics books the same.
      const metrics = await (await fetch(`${gw.url}/metrics`)).text()
      const line = (model: string, type: string) =>
        `switchyard_tokens_total{surface="chat",model="${model}",type="${type}"} `
      expect(metrics).toContain(`${line('bill/pf', 'prompt')}${pf.input}\n`)
      expect(metrics).toContain(`${line('bill/pf', 'completion')}${pf.output}\n`)
      expect(metrics).toContain(`${line('bill/cut', 'completion')}${first.completion_tokens}\n`)
      // The request log: one row, the request's whole tokens and cost, answered by the continuation's model.
      const log = (await (
        await fetch(`${gw.url}/admin/v1/requests?account=continued`, { headers: bearer(ADMIN_TOKEN) })
      ).json()) as any
      expect(log.data).toHaveLength(1)
      expect(log.data[0]).toMatchObject({
        model: 'bill/cut',
        answered_by: 'bill/pf',
        total_tokens: first.total_tokens + rest.total_tokens,
      })
      expect(log.data[0].cost_usd).toBeCloseTo(first.cost_usd + rest.cost_usd, 12)
    })
  })
}
