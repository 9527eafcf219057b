/**
 * Per-key limits from the command line (DESIGN §11), with the starter config of `switchyard init`
 * and the commands the README shows, as pasted (KEY_ID replaced by the id `keys create` printed).
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { STARTER_CONFIG } from '../../src/cli/init.ts'
import { cli } from '../support/cli.ts'
import { tempDir } from '../support/config-doc.ts'

const dir = tempDir()
const config = join(dir, 'switchyard.yaml')
writeFileSync(config, STARTER_CONFIG)
const base = ['--config', config, '--db', join(dir, 'cli.db')]
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** A README command line, split as a shell would (these have no quoting). */
const words = (line: string) => line.trim().split(/\s+/).slice(1)

describe('keys create / set-limits', () => {
  let id = ''
  test('the README commands work as pasted', async () => {
    expect((await cli([...words('switchyard accounts create acme --plan pro'), ...base])).code).toBe(0)
    const made = await cli([
      ...words(
        'switchyard keys create acme --name ci --tpm 20000 --budget-usd 5 --budget-period day --models demo/echo,demo/echo-pro',
      ),
      ...base,
    ])
    expect(made.stderr).not.toContain('error')
    expect(made.code).toBe(0)
    expect(made.stdout).toContain('limits: tpm 20000, budget $5.00/day, models demo/echo,demo/echo-pro')
    id = /key (key_[0-9A-Za-z]+)/.exec(made.stdout)![1]!
    const list = await cli([...words('switchyard keys list acme'), ...base])
    expect(list.stdout.split('\n')[0]).toContain('LIMITS')
    expect(list.stdout).toContain('tpm 20000, budget $5.00/day')

    const set = await cli([...words(`switchyard keys set-limits ${id} --tpm 50000 --rpm 5`), ...base])
    expect(set.code).toBe(0)
    expect(set.stdout).toContain('rpm 5, tpm 50000, budget $5.00/day, models demo/echo,demo/echo-pro')
    const cleared = await cli([
      ...words(`switchyard keys set-limits ${id} --tpm none --models none`),
      ...base,
    ])
    expect(cleared.code).toBe(0)
    expect(cleared.stdout).toBe(`key ${id} limits: rpm 5, budget $5.00/day\n`)
  })

  test('--json gives the key with its limits', async () => {
    const k = (await cli(['keys', 'create', 'acme', '--rpd', '900', '--json', ...base])).json()
    expect(k.key).toMatch(/^sk-sy-/)
    expect(k.limits).toEqual({ rpm: null, rpd: 900, tpm: null, tpd: null, budget: null, models: null })
    const v = (
      await cli([
        'keys',
        'set-limits',
        k.id,
        '--budget-usd',
        '0.25',
        '--budget-period',
        'week',
        '--json',
        ...base,
      ])
    ).json()
    expect(v.limits).toMatchObject({ rpd: 900, budget: { usd: 0.25, period: 'week' } })
    // Only the amount: the period is kept.
    const w = (await cli(['keys', 'set-limits', k.id, '--budget-usd', '1.5', '--json', ...base])).json()
    expect(w.limits.budget).toEqual({ usd: 1.5, period: 'week' })
    // Only the period: the amount is kept.
    const d = (await cli(['keys', 'set-limits', k.id, '--budget-period', 'day', '--json', ...base])).json()
    expect(d.limits.budget).toEqual({ usd: 1.5, period: 'day' })
    const none = (await cli(['keys', 'create', 'acme', '--json', ...base])).json()
    expect(none.limits.budget).toBeNull()
  })

  test('bad flags and limits outside the plan are refused, naming what is wrong', async () => {
    const cases: Array<[string[], number, string]> = [
      [['keys', 'create', 'acme', '--tpm', '0'], 2, '--tpm must be a whole number'],
      [['keys', 'create', 'acme', '--tpm', 'lots'], 2, "got 'lots'"],
      [['keys', 'create', 'acme', '--budget-usd', '5'], 1, 'budget.period: is required'],
      [
        ['keys', 'create', 'acme', '--budget-period', 'day'],
        1,
        'budget.usd: is required: the key has no budget yet',
      ],
      [
        ['keys', 'create', 'acme', '--budget-usd', '1.0000001', '--budget-period', 'day'],
        2,
        'at most 6 decimals',
      ],
      [['keys', 'create', 'acme', '--budget-usd', '1', '--budget-period', 'year'], 2, 'day, week or month'],
      // The starter pro plan has rpm 10.
      [['keys', 'create', 'acme', '--rpm', '11'], 1, "rpm: 11 is above the account's plan 'pro' (rpm 10)"],
      [['keys', 'create', 'acme', '--models', 'demo/nope'], 1, "provider 'demo' has no model 'nope'"],
      [['keys', 'set-limits', id], 2, 'nothing to change'],
      [['keys', 'set-limits', 'key_doesnotexist', '--rpm', '1'], 1, 'no key with id'],
      [['keys', 'create', 'acme', '--tokens', '5'], 2, 'unknown flag --tokens'],
    ]
    for (const [args, code, message] of cases) {
      const r = await cli([...args, ...base])
      expect({ args, code: r.code }).toEqual({ args, code })
      expect(r.stderr).toContain(message)
    }
    // A free account: its plan allows only tier:free models.
    expect((await cli(['accounts', 'create', 'hobby', '--plan', 'free', ...base])).code).toBe(0)
    const pro = await cli(['keys', 'create', 'hobby', '--models', 'demo/echo-pro', ...base])
    expect(pro.code).toBe(1)
    expect(pro.stderr).toContain("'demo/echo-pro' is not in the account's plan 'free'")
    expect(
      (await cli(['keys', 'create', 'hobby', '--models', 'demo/echo', '--rpm', '5', ...base])).code,
    ).toBe(0)
  })

  test('--help lists the limit flags and set-limits', async () => {
    const h = await cli(['keys', '--help'])
    for (const flag of [
      '--rpm N',
      '--rpd N',
      '--tpm N',
      '--tpd N',
      '--budget-usd X',
      '--budget-period P',
      '--models ID',
    ]) {
      expect(h.stdout).toContain(flag)
    }
    expect(h.stdout).toContain('keys set-limits ID')
    expect((await cli(['--help'])).stdout).toContain('keys set-limits ID')
  })
})
