/**
 * The one list of limit settings (config/limit-settings.ts, issue 41): every place that names a
 * plan's or a key's limits lists exactly the list's fields — the config's plan schema, the command
 * line's flags, help and text, the admin API's key limits (its checks and its view), the store's
 * key limits, the console's key form, `/v1/usage` and the rows admission checks — and no file
 * keeps a list of its own (read from the source: three or more limit names in one file's code).
 */
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { applyPatch, keyLimitsView, NO_LIMITS, requireChange } from '../../src/accounts/key-limits.ts'
import { usageReport } from '../../src/accounts/usage-report.ts'
import { parseArgs } from '../../src/cli/args.ts'
import { COMMAND_HELP } from '../../src/cli/help.ts'
import { LIMIT_FLAGS, limitsFromFlags, limitsText } from '../../src/cli/key-limit-flags.ts'
import { parseConfig } from '../../src/config/index.ts'
import {
  cliFlags,
  KEY_COUNTS,
  KEY_LIMIT_FIELDS,
  LIMIT_SETTINGS,
  type LimitSetting,
  WINDOW_COUNTS,
} from '../../src/config/limit-settings.ts'
import { PlanSchema } from '../../src/config/schema.ts'
import { limitsFromForm, limitsSummary } from '../../src/console/ui/pages/key-limits-form.ts'
import { limitRows } from '../../src/limits/rows.ts'
import { openStores } from '../../src/store/index.ts'
import { keyLimitsOf } from '../../src/store/key-limits.ts'
import { GatewayError } from '../../src/util/errors.ts'
import { tempDir, testConfigDoc } from '../support/config-doc.ts'
import { tsFiles } from '../support/ts-files.ts'

const settings = LIMIT_SETTINGS as readonly LimitSetting[]
const keyNames = settings.filter((s) => s.key).map((s) => s.name)
const countNames = KEY_COUNTS.map((s) => s.name)
const message = (fn: () => unknown): string => {
  try {
    fn()
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError)
    return (err as GatewayError).message
  }
  throw new Error('expected a refusal')
}

describe('one list of limit settings', () => {
  test('the config: a plan takes each setting, required or optional as the list says', () => {
    const props = PlanSchema.properties as Record<string, unknown>
    const required = (PlanSchema.required ?? []) as string[]
    const limitFields = Object.keys(props).filter((k) => !['days', 'on_expiry', 'description'].includes(k))
    expect(limitFields).toEqual(settings.map((s) => s.name))
    for (const s of settings) expect(required.includes(s.name)).toBe(s.plan === 'required')
  })

  test('the command line: a flag per key setting, parsed into its field, in the help and the text', () => {
    expect(LIMIT_FLAGS).toEqual(settings.filter((s) => s.key).flatMap(cliFlags))
    const argv = KEY_COUNTS.flatMap((s, i) => [`--${s.name}`, String(i + 1)])
    argv.push('--budget-usd', '2', '--budget-period', 'day', '--models', 'demo/echo')
    const patch = limitsFromFlags(parseArgs(argv, new Set()))
    expect(Object.keys(patch)).toEqual(keyNames)
    const help = COMMAND_HELP.keys!
    for (const f of LIMIT_FLAGS) expect(help).toContain(`--${f} `)
    const text = limitsText(keyLimitsView(applyPatch(NO_LIMITS, patch)))
    for (const n of countNames) expect(text).toContain(`${n} `)
  })

  test('the admin API: each key field is taken, shown, and named when a field is unknown', () => {
    const patch = Object.fromEntries(countNames.map((n, i) => [n, i + 1]))
    const limits = applyPatch(NO_LIMITS, {
      ...patch,
      budget: { usd: 1, period: 'week' },
      models: ['demo/echo'],
    })
    const view = keyLimitsView(limits)
    expect(Object.keys(view)).toEqual(keyNames)
    for (const [n, v] of Object.entries(patch)) expect(view[n as keyof typeof view]).toBe(v)
    expect(message(() => applyPatch(NO_LIMITS, { nope: 1 } as never))).toContain(KEY_LIMIT_FIELDS.join(', '))
    expect(message(() => requireChange({}))).toContain(KEY_LIMIT_FIELDS.join(', '))
  })

  test('the store: a column per key count, read back', () => {
    const columns = Object.fromEntries(countNames.map((n, i) => [n, String(i + 1)]))
    const read = keyLimitsOf({ ...columns, budget_micros: null, budget_period: null, models: null } as never)
    expect(read).toMatchObject(Object.fromEntries(countNames.map((n, i) => [n, i + 1])))
  })

  test("the console's key form: a field per key setting, sent as the admin API takes it", () => {
    const form = new FormData()
    for (const [i, n] of countNames.entries()) form.set(`limit_${n}`, String(i + 1))
    form.set('limit_budget_usd', '2')
    form.set('limit_budget_period', 'day')
    form.set('limit_models', 'demo/echo')
    const body = limitsFromForm(form, false)!
    expect(Object.keys(body)).toEqual(keyNames)
    expect(Object.keys(limitsFromForm(new FormData(), true)!)).toEqual(keyNames)
    const summary = limitsSummary(keyLimitsView(applyPatch(NO_LIMITS, body as never)))
    for (const n of countNames) expect(summary).toContain(`${n} `)
  })

  test('the rows: each window setting makes its row; /v1/usage shows each in rate_limits', async () => {
    const plan = Object.fromEntries(WINDOW_COUNTS.map((s, i) => [s.name, i + 1]))
    const rows = limitRows(plan, null)
    expect(rows.map((r) => [r.resource, r.window, r.capacity])).toEqual(
      WINDOW_COUNTS.map((s, i) => [s.row.resource, s.row.window, i + 1]),
    )
    const dir = tempDir()
    const config = parseConfig(
      testConfigDoc({
        database: { path: join(dir, 'u.db') },
        plans: { p: { ...plan, models: ['*'] } },
        default_plan: 'p',
      }),
      'test',
    )
    const store = await openStores(config)
    try {
      const account = await store.createAccount({
        name: 'a',
        plan: 'p',
        planStartedAt: 0,
        planExpiresAt: null,
        now: Date.now(),
      })
      const report = await usageReport(
        { store, config, clock: { now: () => Date.now() } as never },
        account,
        null,
      )
      expect(report.rate_limits).toMatchObject(plan)
    } finally {
      await store.close()
    }
  })

  test('no other file keeps a list of its own (three or more limit names in its code)', () => {
    const SRC = resolve(import.meta.dir, '../../src')
    // The SQL of a key's limits names its columns (a new one needs a migration anyway).
    const SQL = /^store\/((sqlite|postgres)\/(accounts|migrations[-\w]*)|key-limits)\.ts$/
    const names = settings.filter((s) => s.kind === 'count').map((s) => s.name)
    const code = (t: string) => t.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/.*$/gm, '$1')
    const lists: string[] = []
    for (const file of tsFiles(SRC)) {
      const path = relative(SRC, file)
      if (path === 'config/limit-settings.ts' || SQL.test(path)) continue
      const text = code(readFileSync(file, 'utf8'))
      const named = names.filter((n) => new RegExp(`(['"\`])${n}\\1|\\b${n}\\??\\s*:|\\.${n}\\b`).test(text))
      if (named.length >= 3) lists.push(`${path}: ${named.join(', ')}`)
    }
    expect(lists).toEqual([])
  })
})
