/**
 * Audit finding 9: what a problem says. A union-typed setting said only "Expected union value"
 * (kind, logging.level, features[i], budget.period, on_expiry, rpm: 0); it now says the values
 * it takes, and a mapping where a mapping belongs is checked key by key (`on_expiry: { downgrade:
 * free, after: 1 }` names `after`). A YAML syntax error says near which line.
 */
import { describe, expect, test } from 'bun:test'
import { parseConfig } from '../../src/config/index.ts'
import { testConfigDoc } from '../support/config-doc.ts'
import { problems } from './problems.ts'

describe('messages', () => {
  test('a union-typed setting says the values it takes, and what it got', () => {
    const doc = testConfigDoc({ logging: { level: 'verbose' } }) as any
    doc.providers[0].kind = 'demoo'
    doc.providers[0].models[0].features.push('telepathy')
    doc.plans.free.rpm = 0
    doc.plans.pro.on_expiry = 'disabled'
    doc.plans.unlimited.budget = { usd: 1, period: 'year' }
    expect(problems(() => parseConfig(doc))).toEqual([
      { path: '/logging/level', message: "must be one of debug, info, warn, error (got 'verbose')" },
      { path: '/providers/0/kind', message: "must be one of openai, anthropic, gemini, demo (got 'demoo')" },
      {
        path: '/providers/0/models/0/features/4',
        message: expect.stringMatching(/^must be one of streaming, tools, .*, prefill \(got 'telepathy'\)$/),
      },
      { path: '/plans/free/rpm', message: 'must be an integer of at least 1, or null (got 0)' },
      {
        path: '/plans/pro/on_expiry',
        message: "must be 'disable', or a mapping { downgrade } (got 'disabled')",
      },
      { path: '/plans/unlimited/budget/period', message: "must be one of day, week, month (got 'year')" },
    ])
  })

  test('on_expiry: { downgrade: free, after: 1 } names the unknown key', () => {
    const doc = testConfigDoc() as any
    doc.plans.basic.on_expiry = { downgrade: 'free', after: 1 }
    expect(problems(() => parseConfig(doc))).toEqual([
      { path: '/plans/basic/on_expiry/after', message: 'unknown key (check the spelling)' },
    ])
  })

  test('a mapping missing what its branch needs says so at the path', () => {
    const doc = testConfigDoc() as any
    doc.plans.basic.on_expiry = { downgarde: 'free' }
    expect(problems(() => parseConfig(doc)).map((p) => p.path)).toEqual([
      '/plans/basic/on_expiry/downgrade',
      '/plans/basic/on_expiry/downgarde',
    ])
  })

  // Audit 64: the other problems were TypeBox's own words ("Expected string length greater or
  // equal to 16"), and a pool's problem had a trailing '/' in its path (`/aliases/2/to/`).
  test('every schema problem says what the setting must be and what it got, at its exact path', () => {
    const doc = testConfigDoc({
      alerts: { webhooks: [{ url: 'ftp://x', secret: 'short', events: [] }] },
      aliases: [
        { id: 'team/a', to: [{ model: 'demo/echo', weight: 0 }] },
        { id: 'nope', to: 'demo/echo' },
        { id: 'team/c', to: [] },
        { id: 'team/e' },
      ],
      server: { host: 5, port: 0 },
    }) as any
    doc.providers[0].models[0].features = ['streaming', 'streaming']
    doc.providers[0].models[1].context_window = 1.5
    doc.providers[0].models[1].fallbacks = 'demo/echo'
    doc.plans.basic.budget = { usd: 0, period: 'day' }
    expect(problems(() => parseConfig(doc))).toEqual([
      { path: '/server/host', message: 'must be a string of at least 1 character (got 5)' },
      {
        path: '/alerts/webhooks/0/url',
        message: "must be an http:// or https:// URL without spaces (got 'ftp://x')",
      },
      {
        path: '/alerts/webhooks/0/secret',
        message: 'must be a string of at least 16 characters (got a string of 5 characters)',
      },
      { path: '/alerts/webhooks/0/events', message: 'must be a list of at least 1 item (got an empty list)' },
      {
        path: '/providers/0/models/0/features',
        message: "must name each value once ('streaming' is there twice)",
      },
      { path: '/providers/0/models/1/context_window', message: 'must be an integer of at least 1 (got 1.5)' },
      { path: '/providers/0/models/1/fallbacks', message: "must be a list (got 'demo/echo')" },
      { path: '/aliases/0/to/0/weight', message: 'must be an integer from 1 to 1000000 (got 0)' },
      { path: '/aliases/1/id', message: "must be a model id, 'prefix/name' without spaces (got 'nope')" },
      { path: '/aliases/2/to', message: 'must be a list of at least 1 item (got an empty list)' },
      { path: '/aliases/3/to', message: 'is required (missing)' },
      { path: '/plans/basic/budget/usd', message: 'must be a number greater than 0 (got 0)' },
    ])
  })

  // Review 64: a problem quoted what it got, so `config check`, serve's journal and the reload's
  // 422 body printed the database password, a webhook secret, an Authorization header. A secret
  // setting, a URL with a user or password, and a value from an environment variable now say only
  // the value's kind and length.
  test('a secret, a URL with credentials or a value from the environment is never quoted', () => {
    const doc = testConfigDoc({
      database: { url: 'postgress://switchyard:hunter2-db-password@db:5432/gw' },
      admin: { token: 12345678 },
      metrics: { token: 87654321 },
      limits: { redis_url: 'http://default:redis-pass-9@cache:6379/0' },
      alerts: {
        webhooks: [
          { url: 'https://hooks.example/a', secret: 'shortsecret', events: ['plan.expiring'] },
          { url: 'https://hooks.example/b', secret: '${HOOK_SECRET}', events: ['plan.expiring'] },
          {
            url: 'ftp://hookuser:hook-pass-7@hooks.example',
            secret: 'a-secret-of-16-chars+',
            events: ['plan.expiring'],
          },
        ],
      },
      telemetry: { headers: { Authorization: 'Basic dXNlcjpzZWNyZXQ=\r' } },
      logging: { level: '${LOG_LEVEL}' },
    }) as any
    doc.providers[0].api_key = 424242424242
    doc.providers[0].headers = { 'OpenAI-Organization': 'org-private-77\n' }
    doc.providers.push({
      prefix: 'pool',
      kind: 'openai',
      keys: [{ api_key: 313131313131 }],
      base_url: 'ftp://pooluser:pool-pass-5@upstream',
      models: [{ name: 'm', context_window: 10 }],
    })
    const env = { HOOK_SECRET: 'env-short', LOG_LEVEL: 'verbose-from-env' }
    const found = problems(() => parseConfig(doc, '', env))
    const at = (path: string) => found.find((p) => p.path === path)?.message
    for (const [path, secret] of [
      ['/database/url', 'hunter2'],
      ['/admin/token', '12345678'],
      ['/metrics/token', '87654321'],
      ['/limits/redis_url', 'redis-pass-9'],
      ['/alerts/webhooks/0/secret', 'shortsecret'],
      ['/alerts/webhooks/1/secret', 'env-short'],
      ['/alerts/webhooks/2/url', 'hook-pass-7'],
      ['/telemetry/headers/Authorization', 'dXNlcjpzZWNyZXQ'],
      ['/logging/level', 'verbose-from-env'],
      ['/providers/0/api_key', '424242424242'],
      ['/providers/0/headers/OpenAI-Organization', 'org-private-77'],
      ['/providers/1/keys/0/api_key', '313131313131'],
      ['/providers/1/base_url', 'pool-pass-5'],
    ] as const) {
      expect({ path, message: at(path) }).toEqual({ path, message: expect.any(String) })
      expect({ path, message: at(path) }).not.toEqual({ path, message: expect.stringContaining(secret) })
    }
    expect(at('/alerts/webhooks/0/secret')).toBe(
      'must be a string of at least 16 characters (got a string of 11 characters)',
    )
    expect(at('/alerts/webhooks/1/secret')).toBe(
      'must be a string of at least 16 characters (got a string of 9 characters) (from environment variable HOOK_SECRET)',
    )
    expect(at('/admin/token')).toBe('must be a string (got a number)')
    // A setting that is no secret, written in the file, still shows what it got.
    const plain = testConfigDoc({ logging: { level: 'verbose' } })
    expect(problems(() => parseConfig(plain, '', {}))).toEqual([
      { path: '/logging/level', message: "must be one of debug, info, warn, error (got 'verbose')" },
    ])
  })
})
