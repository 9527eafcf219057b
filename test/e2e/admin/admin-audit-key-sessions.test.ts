/**
 * Disabling or revoking a key ends its console sessions, but the audit line did not say how many:
 * the admin API's said nothing of what changed, the command line's only `{"state": ...}`. As an
 * account disable's line does (admin-audit-disable-sessions.test.ts), both now say the state the
 * key was left in and `sessions_ended` (0 when there were none; an enable ends none and says only
 * `state`).
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

test('admin API: disabling or revoking a key says its state and how many sessions it ended', async () => {
  const a = await gw.key('acme', 'pro')
  const b = await gw.key('acme')
  await signIn(a.key)
  await signIn(a.key)
  // Another key's session, same account: not this key's to end, nor to count.
  await signIn(b.key)

  const disabled = await admin(`/keys/${a.id}/disable`)
  expect(disabled.status).toBe(200)
  const line = await lineOf(disabled)
  expect(line).toMatchObject({ action: 'POST /admin/v1/keys/:id/disable', target: a.id, outcome: 'ok' })
  expect(line.change).toEqual({ state: 'disabled', sessions_ended: 2 })
  // The answer is the key, as before.
  expect(((await disabled.json()) as any).state).toBe('disabled')

  expect((await lineOf(await admin(`/keys/${a.id}/enable`))).change).toEqual({ state: 'enabled' })
  await signIn(a.key)
  expect((await lineOf(await admin(`/keys/${a.id}/revoke`))).change).toEqual({
    state: 'revoked',
    sessions_ended: 1,
  })
  expect((await lineOf(await admin(`/keys/${b.id}/disable`))).change).toEqual({
    state: 'disabled',
    sessions_ended: 1,
  })
  // Nothing left to end: said as 0, not left out.
  expect((await lineOf(await admin(`/keys/${b.id}/revoke`))).change).toEqual({
    state: 'revoked',
    sessions_ended: 0,
  })
})

test('`switchyard keys disable|revoke` (another process): its stderr audit line counts the sessions it ended', async () => {
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

  const off = await cliProcess(['keys', 'disable', k.id, ...base])
  expect(off.code).toBe(0)
  const [line] = audits(off.stderr)
  expect(line).toMatchObject({ actor: 'cli', action: 'keys disable', target: k.id, outcome: 'ok' })
  expect(line.change).toEqual({ state: 'disabled', sessions_ended: 2 })

  const on = await cliProcess(['keys', 'enable', k.id, ...base])
  expect(on.code).toBe(0)
  expect(audits(on.stderr)[0].change).toEqual({ state: 'enabled' })

  await signIn(k.key)
  const gone = await cliProcess(['keys', 'revoke', k.id, ...base])
  expect(gone.code).toBe(0)
  expect(audits(gone.stderr)[0].change).toEqual({ state: 'revoked', sessions_ended: 1 })
}, 30_000)
