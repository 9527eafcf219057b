/**
 * `switchyard alerts test`: one signed `alert.test` event to every webhook, in each webhook's
 * format (json: the signed document; slack `{ text }`, discord `{ content }`), each answer printed,
 * exit 1 when one did not answer 2xx; a config without webhooks says what to add.
 */
import { afterAll, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cli } from '../support/cli.ts'
import { tempDir, testConfigDoc } from '../support/config-doc.ts'
import { startWebhookReceiver, verify } from '../support/webhook-receiver.ts'

const SECRET = 'whsec-cli-0123456789abcdef'
const hook = startWebhookReceiver()
afterAll(() => hook.stop())
const dir = tempDir('switchyard-alerts-cli-')

function config(alerts: unknown): string {
  const path = join(dir, `c${Math.random()}.json`)
  writeFileSync(path, JSON.stringify(testConfigDoc({ database: { path: join(dir, 'db.sqlite') }, alerts })))
  return path
}

test('sends a signed test event to every webhook in its format, and reports each answer', async () => {
  const webhooks = ['json', 'slack', 'discord'].map((format) => ({
    url: `${hook.url}/${format}`,
    secret: SECRET,
    events: ['circuit.opened'],
    format,
  }))
  const r = await cli(['alerts', 'test', '--json', '--config', config({ webhooks })])
  expect(r.code).toBe(0)
  const out = r.json()
  expect(out.results.map((x: any) => [x.format, x.delivered, x.status])).toEqual([
    ['json', true, 200],
    ['slack', true, 200],
    ['discord', true, 200],
  ])
  const [json, slack, discord] = ['json', 'slack', 'discord'].map(
    (f) => hook.got.find((g) => g.url.endsWith(`/${f}`))!,
  )
  expect(json!.doc).toMatchObject({ id: out.event_id, type: 'alert.test' })
  for (const g of [json, slack, discord]) expect(verify(SECRET, g!.signature, g!.body)).toBe(true)
  expect(slack!.doc.text).toStartWith('Switchyard alert.test: ')
  expect(discord!.doc.content).toContain(out.event_id)
})

test('exit 1 when a webhook does not answer 2xx; no webhooks: an error saying what to add', async () => {
  hook.down = true
  try {
    const r = await cli([
      'alerts',
      'test',
      '--config',
      config({ webhooks: [{ url: hook.url, secret: SECRET, events: ['key.suspended'] }] }),
    ])
    expect(r.code).toBe(1)
    expect(r.stdout).toContain(`FAILED  ${hook.url}  503`)
  } finally {
    hook.down = false
  }
  const none = await cli(['alerts', 'test', '--config', config({ webhooks: [] })])
  expect(none.code).toBe(1)
  expect(none.stderr).toContain('add alerts.webhooks')
})
