/**
 * What a reload compares (src/app/config-changes.ts): every start-only setting refuses it by its
 * path and is in the configuration page's list; what changed is reported by the file's own paths
 * (`server.cors_origins`, `limits.suspension`, `plans.free`), never the resolved object's names —
 * every resolved value, changed alone, is reported once under a path the file's schema has; and
 * by the names of a section's entries (plans by name, providers by prefix, aliases by id), never
 * with a value.
 */
import { expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import {
  changedPaths,
  configChanges,
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
