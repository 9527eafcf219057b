/**
 * Issue 22 finding 5: the start line says where the console is, or that it is off and how to turn
 * it on; `/console` while it is off says the same instead of the generic "Unknown route". How to
 * turn it on is a live reload, no restart (audit63 finding 6): a token written into the file and
 * SIGHUP sent, the console answers; `switchyard reload` does it too, with the serve file's
 * credential (audit64 finding 1: it needs no admin token, and never the one the file has now).
 */
import { afterAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { BUN, cli, REPO } from '../support/cli.ts'
import { ADMIN_TOKEN, startGateway, tempDir, testConfigDoc } from '../support/gateway.ts'
import { writeConfig } from '../support/process.ts'

const procs: Array<ReturnType<typeof Bun.spawn>> = []
afterAll(() => {
  for (const p of procs) p.kill('SIGKILL')
})

/** `serve` started on `dir`'s config with `token`, and the first line it prints, in text mode. */
async function started(token: string, dir = tempDir()) {
  const config = writeConfig(dir, testConfigDoc({ admin: { token } }))
  const proc = Bun.spawn([BUN, join(REPO, 'src/main.ts'), 'serve', '--port', '0', '--config', config], {
    stdout: 'pipe',
    stderr: 'pipe',
  })
  procs.push(proc)
  const reader = proc.stdout.getReader()
  let text = ''
  while (!text.includes('\n')) {
    const { value, done } = await reader.read()
    if (done) break
    text += new TextDecoder().decode(value)
  }
  reader.releaseLock()
  return { proc, config, line: text.split('\n')[0]! }
}

async function startLine(token: string): Promise<string> {
  const { proc, line } = await started(token)
  proc.kill('SIGTERM')
  await proc.exited
  return line
}

test('the start line names the console, or says it is off and how to turn it on', async () => {
  const on = await startLine(ADMIN_TOKEN)
  expect(on).toMatch(
    /^Switchyard listening on http:\/\/127\.0\.0\.1:(\d+) .*console http:\/\/127\.0\.0\.1:\1\/console\)$/,
  )
  const off = await startLine('')
  expect(off).toContain('console off')
  expect(off).toContain('admin.token')
  expect(off).toContain('SWITCHYARD_ADMIN_TOKEN')
  expect(off).toContain('kill -HUP')
}, 30_000)

test('a token written into the file and SIGHUP, or switchyard reload, turn the console on, no restart', async () => {
  const dir = tempDir()
  const { proc, config, line } = await started('', dir)
  try {
    const url = /listening on (http:\/\/[^ ]+) /.exec(line)![1]!
    const off = (await (await fetch(`${url}/console`)).json()) as { error: { message: string } }
    expect(off.error.message).toContain('kill -HUP')
    const consoleAnswers = async () => {
      let status = 0
      for (let i = 0; i < 250 && status !== 200; i++) {
        status = (await fetch(`${url}/console`)).status
        if (status !== 200) await Bun.sleep(20)
      }
      return status
    }
    writeConfig(dir, testConfigDoc({ admin: { token: ADMIN_TOKEN } }))
    proc.kill('SIGHUP')
    expect(await consoleAnswers()).toBe(200)
    // Off again by `switchyard reload`, then on: it needs no admin token, the file's or the gateway's.
    writeConfig(dir, testConfigDoc({ admin: { token: '' } }))
    expect((await cli(['reload', '--config', config])).code).toBe(0)
    expect((await fetch(`${url}/console`)).status).toBe(404)
    writeConfig(dir, testConfigDoc({ admin: { token: ADMIN_TOKEN } }))
    const asked = await cli(['reload', '--config', config])
    expect(asked.stderr).toBe('')
    expect(asked.code).toBe(0)
    expect(await consoleAnswers()).toBe(200)
  } finally {
    proc.kill('SIGTERM')
    await proc.exited
  }
}, 30_000)

test('/console while the console is off: a 404 that says so and how to turn it on', async () => {
  const gw = await startGateway({ doc: testConfigDoc({ admin: { token: '' } }) })
  try {
    for (const path of ['/console', '/console/']) {
      const res = await fetch(`${gw.url}${path}`)
      expect(res.status).toBe(404)
      const { error } = (await res.json()) as { error: { code: string; message: string } }
      expect(error.code).toBe('console_off')
      expect(error.message).toContain('console is off')
      expect(error.message).toContain('admin.token')
    }
    // Other unknown routes keep the generic answer.
    expect(((await (await fetch(`${gw.url}/nope`)).json()) as any).error.code).toBe('not_found')
  } finally {
    await gw.stop()
  }
})

test('with an admin token, /console is the console', async () => {
  const gw = await startGateway()
  try {
    const res = await fetch(`${gw.url}/console`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/html')
  } finally {
    await gw.stop()
  }
})
