/**
 * The CLI's audit lines say what changed, as the admin API's do (`change`): `keys create acme`
 * named the account but not the key it made, `keys set-limits` not the limits, `accounts
 * set-plan` not when the plan ends — an auditor could not tell what the command did.
 */
import { afterAll, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { cli } from '../support/cli.ts'
import { tempDir, testConfigDoc } from '../support/config-doc.ts'
import { writeConfig } from '../support/process.ts'

const dir = tempDir()
const base = ['--config', writeConfig(dir, testConfigDoc()), '--db', join(dir, 'cli.db')]
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** The one audit line a command wrote on stderr. */
async function audited(args: string[]): Promise<{ out: any; line: any }> {
  const r = await cli([...args, '--json', ...base])
  expect(r.code).toBe(0)
  const lines = r.stderr
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .filter((l) => l.msg === 'audit')
  expect(lines).toHaveLength(1)
  return { out: r.json(), line: lines[0] }
}

test('each CLI change says what it changed; never the key', async () => {
  const created = await audited(['accounts', 'create', 'acme', '--plan', 'pro', '--days', '30'])
  expect(created.line).toMatchObject({
    actor: 'cli',
    action: 'accounts create',
    target: 'acme',
    outcome: 'ok',
    change: { plan: 'pro', plan_expires_at: created.out.plan_expires_at },
  })
  const plan = await audited(['accounts', 'set-plan', 'acme', 'basic', '--days', '5'])
  expect(plan.line.change).toEqual({ plan: 'basic', plan_expires_at: plan.out.plan_expires_at })
  expect((await audited(['accounts', 'disable', 'acme'])).line.change).toEqual({
    enabled: false,
    sessions_ended: 0,
  })

  const key = await audited(['keys', 'create', 'acme', '--name', 'ci', '--tpm', '500'])
  expect(key.line).toMatchObject({ action: 'keys create', target: 'acme' })
  expect(key.line.change).toEqual({
    key: key.out.id,
    prefix: key.out.prefix,
    name: 'ci',
    limits: key.out.limits,
  })
  const limits = await audited(['keys', 'set-limits', key.out.id, '--rpm', '3'])
  expect(limits.line.change).toEqual({ limits: limits.out.limits })
  expect((await audited(['keys', 'disable', key.out.id])).line.change).toEqual({
    state: 'disabled',
    sessions_ended: 0,
  })
  const rotated = await audited(['keys', 'rotate', key.out.id])
  expect(rotated.line.change).toEqual({ prefix: rotated.out.prefix })
  expect(JSON.stringify([key.line, rotated.line])).not.toContain(key.out.key)
  expect(JSON.stringify(rotated.line)).not.toContain(rotated.out.key)
})

test('a key given where its id belongs: the error names the id, and no output holds the key', async () => {
  const k = (await cli(['keys', 'create', 'acme', '--json', ...base])).json()
  for (const args of [
    ['keys', 'revoke', k.key],
    ['keys', 'set-limits', k.key, '--rpm', '2'],
  ]) {
    const r = await cli([...args, ...base])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`its id is ${k.id}`)
    expect(r.stderr + r.stdout).not.toContain(k.key)
  }
  const unknown = `sk-sy-${'z'.repeat(40)}`
  const r = await cli(['keys', 'disable', unknown, ...base])
  expect(r.stderr).toContain('no key here has it')
  expect(r.stderr).not.toContain(unknown)
  const listed = (await cli(['keys', 'list', 'acme', '--json', ...base])).json()
  expect(listed.find((x: { id: string }) => x.id === k.id).state).toBe('enabled')
})
