/**
 * Audit finding 4: `config check` lists every problem at once. The cross checks (duplicate
 * prefix, unknown default_plan or downgrade target, short admin token, ...) used to run only once
 * the schema passed, so a file with both kinds showed the second kind only after the first was
 * fixed. They now run on whatever parts are valid, never crash on the invalid ones, and never
 * report a reference to a part that exists but is itself invalid.
 */
import { describe, expect, test } from 'bun:test'
import { ConfigError, parseConfig } from '../../src/config/index.ts'
import { testConfigDoc } from '../support/config-doc.ts'
import { problems, textProblems } from './problems.ts'

/** bad1.yaml of the audit: schema problems and cross-reference problems in one file. */
const BOTH = `
server: { host: 127.0.0.1, port: 99999, prot: 1, drain_timeout_s: -1 }
database: { path: ./x.db, busy_timeout_ms: abc }
admin: { token: short }
logging: { level: verbose }
providers:
  - prefix: demo
    kind: demoo
    models:
      - { name: echo, context_window: 0, max_output_tokens: 1024, features: [streaming, telepathy], tier: free }
  - prefix: demo
    kind: openai
    api_key: \${NOPE_KEY}
    models:
      - { name: a, context_window: 10, max_output_tokens: 5, features: [] }
plans:
  free:  { rpm: 5,  rpd: 100,  models: ["tier:free"], on_expiry: { downgrade: gold } }
  "bad plan": { rpm: 1, rpd: 1, models: ["*"] }
default_plan: nope
`

describe('every problem at once', () => {
  test('schema problems and cross-reference problems are listed together', async () => {
    const paths = (await textProblems(BOTH)).map((p) => p.path)
    expect(paths).toEqual(
      expect.arrayContaining([
        // the schema's
        '/server/port',
        '/server/prot',
        '/database/busy_timeout_ms',
        '/logging/level',
        '/providers/0/kind',
        '/providers/0/models/0/context_window',
        '/plans/bad plan',
        '/providers/1/api_key',
        // the cross checks'
        '/admin/token',
        '/providers/1/prefix',
        '/default_plan',
        '/plans/free/on_expiry/downgrade',
      ]),
    )
  })

  test('a reference to a provider, model or plan that exists but is invalid is not called missing', () => {
    const doc = testConfigDoc() as any
    doc.providers.push({
      prefix: 'openai',
      kind: 'openai',
      api_key: 'sk-x',
      retry: { attempts: 'many' },
      models: [{ name: 'gpt', context_window: 0, max_output_tokens: 1, features: ['streaming'] }],
    })
    doc.providers[0].models[0].fallbacks = ['openai/gpt']
    doc.plans.gold = { rpm: 'lots', rpd: 1, models: ['openai/*'] }
    doc.plans.free.on_expiry = { downgrade: 'gold' }
    doc.default_plan = 'gold'
    expect(problems(() => parseConfig(doc)).map((p) => p.path)).toEqual([
      '/providers/1/retry/attempts',
      '/providers/1/models/0/context_window',
      '/plans/gold/rpm',
    ])
  })

  test('cross checks still run on the valid parts beside an invalid one', () => {
    const doc = testConfigDoc() as any
    doc.providers[0].models[0].context_window = -1
    doc.providers[0].models.push({ ...doc.providers[0].models[1] })
    doc.plans.free.models = ['nosuch/*']
    expect(problems(() => parseConfig(doc)).map((p) => p.path)).toEqual([
      '/providers/0/models/0/context_window',
      '/providers/0/models/2/name',
      '/plans/free/models/0',
    ])
  })

  // Past 50 schema problems the rest were dropped without a word: 60 bad models listed 50, and
  // the next run showed 10 more.
  test('more than 50 problems are all listed', () => {
    const models = Array.from({ length: 60 }, (_, i) => ({
      name: `m${i}`,
      context_window: 'x',
      max_output_tokens: 1,
      features: [],
    }))
    const doc = testConfigDoc({ providers: [{ prefix: 'demo', kind: 'demo', models }] })
    const found = problems(() => parseConfig(doc))
    expect(found.map((p) => p.path)).toEqual(models.map((_, i) => `/providers/0/models/${i}/context_window`))
  })

  test('two problems at one path are both listed (an admin token both short and spaced)', () => {
    expect(
      problems(() => parseConfig(testConfigDoc({ admin: { token: 'a b' } }))).map((p) => p.message),
    ).toEqual([
      expect.stringContaining('admin.token is 3 characters'),
      expect.stringContaining('without spaces'),
    ])
  })

  /** Every node of a full config replaced, one at a time, by each wrong shape: a ConfigError each time, never a crash. */
  test('no wrong shape anywhere crashes the checks', () => {
    const base = testConfigDoc() as any
    base.providers.push({
      prefix: 'openai',
      kind: 'openai',
      base_url: 'https://api.openai.com/v1',
      api_key: 'sk-x',
      keys: [{ api_key: 'sk-a', weight: 2 }],
      retry: { attempts: 1, backoff_ms: 10, max_backoff_ms: 100, max_retry_after_s: 1 },
      circuit: { failures: 2, cooldown_s: 3 },
      headers: { 'x-a': 'b' },
      timeouts: { first_byte_ms: 1, total_ms: 2 },
      models: [
        {
          name: 'gpt',
          context_window: 10,
          max_output_tokens: 1,
          features: ['streaming'],
          temperature: { min: 0, max: 1 },
          pricing: { input: 1, output: 2 },
          fallbacks: ['demo/echo'],
        },
        { name: 'emb', type: 'embedding', context_window: 10, dimensions: 3 },
      ],
    })
    base.plans.pro.budget = { usd: 5, period: 'day' }
    base.database = { path: 'x.db' }
    base.limits = { suspension: { enabled: true }, on_unavailable: 'reject' }
    const wrong: unknown[] = [null, 7, 'x', [], {}, [null], { a: null }]
    let cases = 0
    const visit = (node: any, set: (v: unknown) => void, path: string) => {
      for (const w of wrong) {
        const saved = structuredClone(base)
        set(w)
        try {
          parseConfig(base)
        } catch (e) {
          if (!(e instanceof ConfigError)) throw new Error(`${path} = ${JSON.stringify(w)}: ${e}`)
        } finally {
          for (const k of Object.keys(base)) delete base[k]
          Object.assign(base, saved)
        }
        cases++
      }
      if (node && typeof node === 'object') {
        for (const k of Object.keys(node)) {
          visit(
            node[k],
            (v) => {
              const parent = pathGet(base, path)
              parent[k] = v
            },
            `${path}/${k}`,
          )
        }
      }
    }
    const pathGet = (root: any, path: string) =>
      path
        .split('/')
        .slice(1)
        .reduce((o, k) => o[k], root)
    for (const k of Object.keys(base)) visit(base[k], (v) => (base[k] = v), `/${k}`)
    expect(cases).toBeGreaterThan(500)
  })
})
