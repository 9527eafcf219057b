/**
 * Issue 22 finding 5: `config check` says OK only where `serve` would start and work. It used to
 * pass `PORT=abc` (serve refuses it) and an admin token with spaces (which no request or console
 * sign-in can ever present: it travels as one word of `Authorization: Bearer <token>`).
 */
import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { cli, cliProcess } from '../support/cli.ts'
import { tempDir, testConfigDoc } from '../support/config-doc.ts'
import { UNSUPERVISED, writeConfig } from '../support/process.ts'

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

  // Audit 65a: HOST='bad host!' passed the check while serve failed at listen, naming no HOST.
  test.each(['bad host!', '127.0.0.1:80', '999.1.1.1'])('HOST=%s: both refuse, naming HOST', async (host) => {
    const check = await cli(['config', 'check', '--config', good, '--json'], { HOST: host })
    expect(check.code).toBe(1)
    expect(check.json()).toMatchObject({ ok: false, problems: [{ path: '$HOST' }] })
    const serve = await cli(['serve', '--config', good, '--json'], { HOST: host })
    expect(serve.code).toBe(2)
    expect(JSON.parse(serve.stderr).error.message).toStartWith('environment variable HOST must be')
    expect((await cli(['serve', '--config', good, '--host', host])).stderr).toContain('--host must be')
  })

  test.each(['bad host!', '127.0.0.1:80', 'http://localhost'])(
    'server.host %s in the file: refused, naming /server/host',
    async (host) => {
      const path = writeConfig(dir, testConfigDoc({ server: { host, port: 0 } }), 'host.yaml')
      const check = await cli(['config', 'check', '--config', path, '--json'])
      expect(check.code).toBe(1)
      expect(check.json().problems).toEqual([
        { path: '/server/host', message: expect.stringContaining('an IP address or a host name') },
      ])
    },
  )

  test.each([
    '127.0.0.1',
    '0.0.0.0',
    '::1',
    '[::1]',
    'localhost',
    'gw-1.internal',
    'proj_web_1',
    'a_b.example',
  ])('HOST=%s, an address of the right form, is OK', async (host) => {
    expect((await cli(['config', 'check', '--config', good], { HOST: host })).code).toBe(0)
  })

  test('a well-formed host that is not this machine: the listen failure names where it came from', async () => {
    const fromEnv = await cliProcess(['serve', '--config', good, '--port', '0', '--json'], {
      env: { ...UNSUPERVISED, HOST: 'nohost.invalid' },
    })
    expect(fromEnv.code).toBe(1)
    const line = fromEnv.stderr.split('\n').find((l) => l.includes('"listen_failed"'))
    expect(JSON.parse(line!).error.message).toContain('env HOST is not an address of this machine')
    const path = writeConfig(dir, testConfigDoc({ server: { host: 'nohost.invalid', port: 0 } }), 'far.yaml')
    const fromFile = await cliProcess(['serve', '--config', path], { env: { ...UNSUPERVISED, HOST: '' } })
    expect(fromFile.code).toBe(1)
    expect(fromFile.stderr).toContain(`server.host in ${path} is not an address of this machine`)
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
