/**
 * Issue 22 finding 5: `config check` says OK only where `serve` would start and work. It used to
 * pass `PORT=abc` (serve refuses it) and an admin token with spaces (which no request or console
 * sign-in can ever present: it travels as one word of `Authorization: Bearer <token>`).
 */
import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { cli } from '../support/cli.ts'
import { tempDir, testConfigDoc } from '../support/config-doc.ts'
import { writeConfig } from '../support/process.ts'

const dir = tempDir()
const good = writeConfig(dir, testConfigDoc())

describe('config check agrees with serve', () => {
  test.each(['abc', '99999', '-1'])('PORT=%s: both refuse, naming PORT', async (port) => {
    const check = await cli(['config', 'check', '--config', good], { PORT: port })
    expect(check.code).toBe(1)
    expect(check.stderr).toContain('PORT')
    const json = await cli(['config', 'check', '--config', good, '--json'], { PORT: port })
    expect(json.json()).toMatchObject({ ok: false, problems: [{ path: '$PORT' }] })
    const serve = await cli(['serve', '--config', good], { PORT: port })
    expect(serve.code).not.toBe(0)
    expect(serve.stderr).toContain('PORT')
  })

  test('a good PORT, or none, is OK', async () => {
    expect((await cli(['config', 'check', '--config', good], { PORT: '8081' })).code).toBe(0)
    expect((await cli(['config', 'check', '--config', good])).code).toBe(0)
  })

  test.each([
    ['with spaces', 'my very secret admin token for the gateway'],
    ['with a tab', 'abcdefghijklmnop\tqrstuvwxyz0123456789'],
    ['not ASCII', 'café-café-café-café-café-café-café-café'],
  ])('an admin token %s → refused, naming /admin/token', async (_, token) => {
    const path = writeConfig(dir, testConfigDoc({ admin: { token } }), `t-${token.length}.yaml`)
    const check = await cli(['config', 'check', '--config', path, '--json'])
    expect(check.code).toBe(1)
    expect(check.json().problems).toEqual([
      { path: '/admin/token', message: expect.stringContaining('without spaces') },
    ])
  })

  test('a one-word admin token of 32+ printable characters is OK', async () => {
    const path = writeConfig(dir, testConfigDoc({ admin: { token: 'Ab1!-_.~'.repeat(5) } }), 'ok.yaml')
    expect((await cli(['config', 'check', '--config', join(path)])).code).toBe(0)
  })
})
