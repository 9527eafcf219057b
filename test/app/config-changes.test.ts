/**
 * What a reload compares (src/app/config-changes.ts): every start-only setting refuses it by its
 * path and is in the configuration page's list; what changed is reported by section and by the
 * names of a section's entries, for any section made of named entries (plans by name, providers
 * by prefix, a list by `id` such as `aliases:`), never with a value.
 */
import { expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { configChanges, RESTART_ONLY_PATHS, restartProblems } from '../../src/app/config-changes.ts'
import { type Config, parseConfig } from '../../src/config/index.ts'
import { testConfigDoc } from '../support/config-doc.ts'

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

test('changes are named by section and entry, for any section of named entries', () => {
  const before = { ...base(), aliases: [{ id: 'team/fast', to: 'demo/echo' }] } as Config
  const after = parseConfig(
    testConfigDoc({
      plans: {
        ...(testConfigDoc().plans as object),
        free: { rpm: 1, rpd: 1, models: ['*'] },
        extra: { rpm: 1, rpd: 1, models: ['*'] },
      },
    }),
    'f.yaml',
  )
  const withAliases = {
    ...after,
    aliases: [
      { id: 'team/fast', to: 'demo/echo-pro' },
      { id: 'team/new', to: 'demo/echo' },
    ],
  } as Config
  const c = configChanges(before, withAliases)
  expect(c.sections.sort()).toEqual(['aliases', 'plans'])
  expect(c.entries.plans).toEqual({ added: ['extra'], removed: [], changed: ['free'] })
  expect(c.entries.aliases).toEqual({ added: ['team/new'], removed: [], changed: ['team/fast'] })
  expect(configChanges(base(), base())).toEqual({ sections: [], entries: {} })
})
