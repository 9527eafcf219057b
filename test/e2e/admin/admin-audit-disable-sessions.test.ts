/**
 * Disabling an account ends its keys' console sessions (console-me-session-account.test.ts), but
 * its audit line did not say so: the admin API's said nothing of what changed at all, the command
 * line's only `{"enabled": false}`. An auditor reading why a key holder was signed out found no
 * line that did it. Both lines now say what the disable left: `enabled` and `sessions_ended`, the
 * number of sessions it ended (0 when there were none; an enable ends none and says only
 * `enabled`).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { cliProcess } from '../../support/cli.ts'
import { ADMIN_TOKEN, bearer, startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'
import { writeConfig } from '../../support/process.ts'

let gw: TestGateway
beforeAll(async () => {
  gw = await startGateway()
})
afterAll(() => gw.stop())

const auditLines = () =>
  gw.logs.map((l) => JSON.parse(l)).filter((l: { msg: string }) => l.msg === 'audit') as Array<
    Record<string, any>
  >

/** The audit line of the response with this request id (written once the response is sent). */
async function lineOf(r: Response): Promise<Record<string, any>> {
  const id = r.headers.get('x-request-id')
  for (let i = 0; i < 200; i++) {
    const line = auditLines().find((l) => l.request_id === id)
    if (line) return line
    await Bun.sleep(10)
  }
  throw new Error(`no audit line for ${id}`)
}

const admin = (path: string) =>
  fetch(`${gw.url}/admin/v1${path}`, { method: 'POST', headers: bearer(ADMIN_TOKEN) })

async function signIn(key: string): Promise<void> {
  const r = await fetch(`${gw.url}/console/me/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: new URL(gw.url).origin },
    body: JSON.stringify({ key }),
  })
  expect(r.status).toBe(200)
}

test('admin API: disabling an account says it is disabled and how many sessions it ended', async () => {
  const a = await gw.key('acme', 'pro')
  const b = await gw.key('acme')
  await signIn(a.key)
  await signIn(a.key)
  await signIn(b.key)
  // Another account's session is not the disable's to end, nor to count.
  await signIn((await gw.key('bystander', 'pro')).key)

  const disabled = await admin('/accounts/acme/disable')
  expect(disabled.status).toBe(200)
  const line = await lineOf(disabled)
  expect(line).toMatchObject({
    action: 'POST /admin/v1/accounts/:name/disable',
    target: 'acme',
    outcome: 'ok',
  })
  expect(line.change).toEqual({ enabled: false, sessions_ended: 3 })
  // The answer is the account, as before.
  expect(((await disabled.json()) as any).enabled).toBe(false)

  const enabled = await admin('/accounts/acme/enable')
  expect((await lineOf(enabled)).change).toEqual({ enabled: true })
  // Nothing left to end: said as 0, not left out.
  expect((await lineOf(await admin('/accounts/acme/disable'))).change).toEqual({
    enabled: false,
    sessions_ended: 0,
  })
  await admin('/accounts/acme/enable')
})

test('`switchyard accounts disable` (another process): its stderr audit line counts the sessions it ended', async () => {
  const k = await gw.key('cli-co', 'pro')
  await signIn(k.key)
  await signIn(k.key)
  const config = writeConfig(gw.dir, testConfigDoc(), 'cli.yaml')
  const base = ['--config', config, '--db', join(gw.dir, 'switchyard.db')]
  const audits = (stderr: string) =>
    stderr
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .filter((l) => l.msg === 'audit')

  const off = await cliProcess(['accounts', 'disable', 'cli-co', ...base])
  expect(off.code).toBe(0)
  const [line] = audits(off.stderr)
  expect(line).toMatchObject({ actor: 'cli', action: 'accounts disable', target: 'cli-co', outcome: 'ok' })
  expect(line.change).toEqual({ enabled: false, sessions_ended: 2 })

  const on = await cliProcess(['accounts', 'enable', 'cli-co', ...base])
  expect(on.code).toBe(0)
  expect(audits(on.stderr)[0].change).toEqual({ enabled: true })
}, 30_000)
