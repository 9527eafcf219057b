/**
 * What `serve` says when it starts, and when it cannot. The README's logs ("JSON lines on
 * stderr ... start, shutdown") had shutdown lines but no start: a log collector saw a gateway
 * stop that it never saw start, nor on which address and database it served. A port taken is
 * cli-ops.test.ts's (its two taken-port runs check the same exit and message, timed).
 */

import { expect, test } from 'bun:test'
import { join } from 'node:path'
import { cliProcess } from '../support/cli.ts'
import { tempDir, testConfigDoc } from '../support/config-doc.ts'
import { spawnServe, writeConfig } from '../support/process.ts'

test('the start is a JSON log line on stderr: url, workers, database, pid, version', async () => {
  const dir = tempDir()
  const config = writeConfig(dir, testConfigDoc())
  const serve = await spawnServe(['--port', '0', '--config', config])
  expect(await serve.kill('SIGTERM')).toBe(0)
  const lines = (await new Response(serve.proc.stderr as ReadableStream).text())
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
  const start = lines.find((l) => l.msg === 'listening')
  expect(start).toMatchObject({ level: 'info', url: serve.url, workers: 1, pid: serve.pid })
  expect(start.database).toContain(dir)
  expect(typeof start.version).toBe('string')
  expect(lines.indexOf(start)).toBeLessThan(lines.findIndex((l) => l.msg === 'shutting down'))
}, 30_000)

// "cannot listen on notahost:0: EINVAL: invalid argument, listen" said neither which setting was
// wrong nor what to put there; it names the one the host came from (audit 65a: not all three).
// A host of no address's form is refused before anything starts (config-check-agrees.test.ts).
test('a host it cannot listen on: exit 1 naming the flag it came from and what to give', async () => {
  const config = writeConfig(tempDir(), testConfigDoc())
  for (const host of ['notahost.invalid', '10.255.255.1']) {
    const r = await cliProcess(['serve', '--host', host, '--port', '0', '--config', config])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`cannot listen on ${host}:0`)
    expect(r.stderr).toContain('--host is not an address of this machine')
    expect(r.stderr).toContain('0.0.0.0')
  }
  const url = await cliProcess(['serve', '--host', 'http://127.0.0.1', '--port', '0', '--config', config])
  expect(url.code).toBe(2)
  expect(url.stderr).toContain('--host must be an IP address or a host name')
}, 30_000)

// Review 64: an account whose plan was taken out of the config is refused (403
// plan_not_configured) after its plan's end too, until an operator acts; the start's warning
// said only "their requests are refused", not until when nor what puts them back.
test('a plan taken out of the config: the start warns which accounts are refused and how to let them in', async () => {
  const dir = tempDir()
  const doc = testConfigDoc({ database: { path: join(dir, 'gw.db') } }) as any
  const config = writeConfig(dir, doc)
  for (const name of ['acme', 'globex']) {
    const made = await cliProcess(['accounts', 'create', name, '--plan', 'unlimited', '--config', config])
    expect(made.code).toBe(0)
  }
  delete doc.plans.unlimited
  writeConfig(dir, doc)
  const serve = await spawnServe(['--port', '0', '--config', config])
  expect(await serve.kill('SIGTERM')).toBe(0)
  const lines = (await new Response(serve.proc.stderr as ReadableStream).text())
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
  const warning = lines.find((l) => l.plan === 'unlimited')
  expect(warning).toMatchObject({ level: 'warn', accounts: ['acme', 'globex'] })
  expect(warning.msg).toContain('403 plan_not_configured')
  expect(warning.msg).toContain("after their plan's end too")
  expect(warning.msg).toContain('until the plan is back or they are moved')
  expect(warning.fix).toContain('switchyard accounts set-plan NAME PLAN')
}, 30_000)
