/**
 * What a reload compares (src/app/config-changes.ts): every start-only setting refuses it by its
 * path and is in the configuration page's list; what changed is reported by the file's own paths
 * (`server.cors_origins`, `limits.suspension`, `plans.free`), never the resolved object's names —
 * every resolved value, changed alone, is reported once under a path the file's schema has; every
 * setting changed in the file is reported under its own path, as start-only or live as this file
 * says (stop 65: two rows of `SETTINGS` swapped — their paths, their reads or their kinds — passed
 * every test here); and by the names of a section's entries (plans by name, providers by prefix,
 * aliases by id), never with a value.
 */
import { expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import {
  changedPaths,
  configChanges,
  LIVE_PATHS,
  RESTART_ONLY_PATHS,
  restartProblems,
} from '../../src/app/config-changes.ts'
import { type Config, ConfigSchema, parseConfig } from '../../src/config/index.ts'
import { PLANS, testConfigDoc } from '../support/config-doc.ts'

const base = () => parseConfig(testConfigDoc(), 'f.yaml')

test('a changed start-only setting is a problem with its path; a live one is not', () => {
  const next = base()
  next.server.port = 9
  next.database.url = 'postgres://u:secret@h/db'
  next.server.bodyLimitBytes = 1
  const problems = restartProblems(base(), next)
  expect(problems.map((p) => p.path)).toEqual(['/server/port', '/database/url'])
  expect(problems[0]!.message).toContain('restart')
  expect(JSON.stringify(problems)).not.toContain('secret')
})

test('the configuration page lists every start-only setting', () => {
  const page = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8')
  const section = page.slice(page.indexOf('## Live reload'))
  for (const path of RESTART_ONLY_PATHS) expect(section).toContain(`\`${path}\``)
})

test('changes are named by the file: its settings and the names of its entries', () => {
  const next = parseConfig(
    testConfigDoc({
      server: { host: '127.0.0.1', port: 0, cors_origins: ['https://a.example'], body_timeout_s: 9 },
      limits: { suspension: { max_rejections: 3 } },
      plans: { ...PLANS, free: { rpm: 1, rpd: 1, models: ['*'] }, extra: { rpm: 1, rpd: 1, models: ['*'] } },
      aliases: [{ id: 'team/new', to: 'demo/echo' }],
    }),
    'f.yaml',
  )
  const c = configChanges(base(), next)
  expect(c.sections).toEqual(['server', 'limits', 'aliases', 'plans'])
  expect(c.entries.server).toEqual({ added: [], removed: [], changed: ['body_timeout_s', 'cors_origins'] })
  expect(c.entries.limits).toEqual({ added: [], removed: [], changed: ['suspension'] })
  expect(c.entries.plans).toEqual({ added: ['extra'], removed: [], changed: ['free'] })
  expect(c.entries.aliases).toEqual({ added: ['team/new'], removed: [], changed: [] })
  expect(changedPaths(c)).toEqual([
    'server.body_timeout_s',
    'server.cors_origins',
    'limits.suspension',
    'aliases.team/new (added)',
    'plans.free',
    'plans.extra (added)',
  ])
  expect(configChanges(base(), base())).toEqual({ sections: [], entries: {} })
})

/** Whether `path` (dotted) is a setting of the file's schema; a named section's entries by the section. */
function inSchema(path: string): boolean {
  let schema: any = ConfigSchema
  for (const part of path.split('.')) {
    if (!schema.properties) return schema.type === 'array' || schema.patternProperties !== undefined
    schema = schema.properties[part]
    if (!schema) return false
  }
  return true
}

test('every resolved value, changed alone, is reported once by a path the file has', () => {
  const changedAlone = (mutate: (c: Record<string, any>) => void): string[] => {
    const next = base() as unknown as Record<string, any>
    mutate(next)
    const restart = restartProblems(base(), next as Config).map((p) => p.path.slice(1).replaceAll('/', '.'))
    return [...restart, ...changedPaths(configChanges(base(), next as Config))]
  }
  const c = base() as unknown as Record<string, any>
  let walked = 0
  for (const [section, value] of Object.entries(c)) {
    if (section === 'source') continue
    const leaves =
      value && typeof value === 'object' && !Array.isArray(value) && section !== 'plans'
        ? Object.keys(value)
        : [null]
    for (const leaf of leaves) {
      const said = changedAlone((n) => {
        if (leaf !== null) n[section][leaf] = ['changed']
        else if (section === 'plans') n.plans = { ...n.plans, other: PLANS.free }
        else if (Array.isArray(value)) n[section] = [...value, { id: 'team/other', prefix: 'other' }]
        else n[section] = ['changed']
      })
      const where = leaf === null ? section : `${section}.${leaf}`
      expect({ where, said: said.length }).toEqual({ where, said: 1 })
      const path = said[0]!.replace(/ \(added\)$/, '')
      expect({ where, path, inSchema: inSchema(path) }).toEqual({ where, path, inSchema: true })
      // Never the resolved object's own name for a setting the file spells otherwise.
      expect(said[0]).not.toMatch(/[A-Z]/)
      walked++
    }
  }
  expect(walked).toBeGreaterThan(40)
})

/**
 * Each setting of the file, whether it is start-only, and a change to it as the file writes it —
 * kept here apart from `SETTINGS`, so a row that reads another's value, or has another's kind,
 * disagrees with it.
 */
/** The alerts settings apply to webhooks: both configs have one. */
const HOOKED = {
  alerts: {
    webhooks: [{ url: 'https://h.example/a', secret: 'whsec-0123456789abcdef', events: ['reload.applied'] }],
  },
}

const FILE_CHANGES: Array<
  [path: string, kind: 'start' | 'live', value: unknown, around?: Record<string, unknown>]
> = [
  ['server.host', 'start', '127.0.0.2'],
  ['server.port', 'start', 9],
  ['server.workers', 'start', 2],
  ['server.idle_timeout_s', 'start', 7],
  ['server.max_upstream_connections', 'start', 17],
  ['server.body_limit_bytes', 'live', 12_345],
  ['server.body_timeout_s', 'live', 9],
  ['server.stream_keepalive_ms', 'live', 1_234],
  ['server.stream_hold_ms', 'live', 1_111],
  ['server.drain_timeout_s', 'live', 7],
  ['server.cors_origins', 'live', ['https://a.example']],
  ['server.allowed_hosts', 'live', ['gw.example']],
  ['database.path', 'start', 'other.db'],
  ['database.url', 'start', 'postgres://h/db'],
  ['database.busy_timeout_ms', 'start', 1_234],
  ['database.pool_size', 'start', 3],
  ['admin.token', 'live', 'another-admin-token-0123456789abcdef'],
  ['admin.session_ttl_s', 'live', 120],
  ['metrics.token', 'live', 'a-metrics-token-0123456789abcdef'],
  ['logging.level', 'start', 'debug'],
  ['logging.access', 'start', false],
  ['usage.retention_days', 'live', 7],
  ['usage.flush_ms', 'start', 123],
  ['usage.log_max_rows', 'live', 5_000],
  ['usage.hourly_retention_days', 'live', 3],
  ['usage.daily_retention_days', 'live', 30],
  ['limits.suspension', 'live', { max_rejections: 3 }],
  ['limits.minute_window_ms', 'start', 1_000],
  ['limits.day_window_ms', 'start', 10_000],
  // Redis admissions need PostgreSQL for usage: both configs have it.
  ['limits.redis_url', 'start', 'redis://127.0.0.1:1', { database: { url: 'postgres://h/db' } }],
  ['limits.on_unavailable', 'start', 'allow'],
  ['limits.reservation_ttl_s', 'start', 30],
  [
    'alerts.webhooks',
    'live',
    [{ url: 'https://h.example/x', secret: 'whsec-0123456789abcdef', events: ['reload.applied'] }],
    HOOKED,
  ],
  ['alerts.plan_expiring_days', 'live', 2, HOOKED],
  ['alerts.backoff_ms', 'live', 100, HOOKED],
  ['alerts.max_backoff_ms', 'live', 100_000, HOOKED],
  ['alerts.give_up_after_s', 'live', 120, HOOKED],
  ['alerts.poll_ms', 'live', 100, HOOKED],
  ['telemetry', 'start', { otlp_endpoint: 'http://127.0.0.1:4318' }],
  [
    'providers',
    'live',
    [
      {
        prefix: 'other',
        kind: 'demo',
        models: [{ name: 'm', context_window: 8, max_output_tokens: 8, features: [] }],
      },
    ],
  ],
  ['aliases', 'live', [{ id: 'team/x', to: 'demo/echo' }]],
  ['plans', 'live', { other: PLANS.free }],
  ['default_plan', 'live', 'pro'],
]

test('every setting changed in the file is reported under its own path, start-only or live as it is', () => {
  const dotted = (pointer: string) => pointer.slice(1).replaceAll('/', '.')
  expect(FILE_CHANGES.map(([path]) => path).sort()).toEqual(
    [...RESTART_ONLY_PATHS.map(dotted), ...LIVE_PATHS].sort(),
  )
  for (const [path, kind, value, around = {}] of FILE_CHANGES) {
    const doc = testConfigDoc(around) as Record<string, any>
    const [section, key] = path.split('.') as [string, string | undefined]
    if (key !== undefined) doc[section] = { ...doc[section], [key]: value }
    else if (section === 'providers') doc.providers = [...doc.providers, ...(value as unknown[])]
    else if (section === 'plans') doc.plans = { ...doc.plans, ...(value as object) }
    else doc[section] = value
    const before = parseConfig(testConfigDoc(around), 'f.yaml')
    const next = parseConfig(doc, 'f.yaml')
    const said = {
      start: restartProblems(before, next).map((p) => dotted(p.path)),
      live: changedPaths(configChanges(before, next)).map((p) => p.replace(/\.[^.]+ \(added\)$/, '')),
    }
    const expected = kind === 'start' ? { start: [path], live: [] } : { start: [], live: [path] }
    expect({ path, ...said }).toEqual({ path, ...expected })
  }
})
