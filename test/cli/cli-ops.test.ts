/**
 * Running it as an operator would: init, --version, per-command help, environment values checked,
 * database.path from the config's folder, secrets only where providers are called, expiry now,
 * a removed plan warned about, start-up failures that end the process.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cli, cliProcess } from '../support/cli.ts'
import { PLANS, tempDir, testConfigDoc } from '../support/config-doc.ts'
import { type ServeProcess, spawnServe, writeConfig } from '../support/process.ts'

const procs: ServeProcess[] = []
afterAll(() => {
  for (const p of procs) p.proc.kill('SIGKILL')
})

/** The CLI as a real process (the bundled entry: support/main-bundle.ts), from `cwd`. */
const run = (args: string[], cwd: string, env: Record<string, string> = {}) => cliProcess(args, { cwd, env })

describe('first hour', () => {
  test('init writes the commented starter config, which config check accepts; never overwrites', async () => {
    const dir = tempDir()
    const path = join(dir, 'conf', 'switchyard.yaml')
    const r = await cli(['init', '--path', path])
    expect(r.code).toBe(0)
    expect(await Bun.file(path).text()).toContain('# ')
    expect((await cli(['config', 'check', '--config', path])).code).toBe(0)
    const again = await cli(['init', '--path', path])
    expect(again.code).toBe(1)
    expect(again.stderr).toContain('already exists')
  })

  test('--version exits 0; `keys --help` shows the keys flags, not the global help', async () => {
    const v = await cli(['--version'])
    expect(v.code).toBe(0)
    expect(v.stdout).toMatch(/^switchyard \d+\.\d+\.\d+/)
    const h = await cli(['keys', '--help'])
    expect(h.code).toBe(0)
    expect(h.stdout).toContain('--name LABEL')
    expect(h.stdout).toContain('keys rotate ID')
    expect(h.stdout).not.toContain('accounts set-plan')
    expect((await cli(['accounts', '--help'])).stdout).toContain('--expires-at')
    expect((await cli(['serve', '--help'])).stdout).toContain('--workers N')
  })

  // The global line said only `sessions revoke ID`; its --key and --kind were on the command's page.
  test('the global help names every form of sessions revoke that `sessions --help` does', async () => {
    const global = (await cli(['--help'])).stdout
    const line = global.split('\n').find((l) => l.trimStart().startsWith('sessions revoke'))
    expect(line).toBeDefined()
    const page = (await cli(['sessions', '--help'])).stdout
    const flags = page.match(/^ {2}sessions revoke (--[a-z-]+)/gm)?.map((l) => l.split(' ').pop())
    expect(flags).toEqual(['--key', '--kind'])
    for (const flag of flags ?? []) expect(line).toContain(flag)
  })

  test('the global help shows --plan as optional, as accounts create takes it', async () => {
    const h = await cli(['--help'])
    expect(h.code).toBe(0)
    const line = h.stdout.split('\n').find((l) => l.trimStart().startsWith('accounts create'))!
    expect(line).toContain('[--plan PLAN]')
    // and so it is: without --plan the account gets default_plan
    const dir = tempDir()
    const config = writeConfig(dir, testConfigDoc())
    const made = await cli(['accounts', 'create', 'noplan', '--config', config, '--json'])
    expect(made.code).toBe(0)
    expect(JSON.parse(made.stdout).plan).toBe('free')
  })

  test('PORT=abc is an error naming PORT', async () => {
    const dir = tempDir()
    const config = writeConfig(dir, testConfigDoc())
    const r = await cli(['serve', '--config', config], { PORT: 'abc' })
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('PORT')
    expect(r.stderr).toContain("'abc'")
  })

  test('the CLI from another folder with --config sees the same accounts as serve', async () => {
    const root = tempDir()
    const vm = join(root, 'vm')
    const elsewhere = join(root, 'elsewhere')
    mkdirSync(vm)
    mkdirSync(elsewhere)
    writeConfig(vm, testConfigDoc({ database: { path: './data/switchyard.db' } }))
    expect((await run(['accounts', 'create', 'alice', '--plan', 'free'], vm)).code).toBe(0)
    const serve = await spawnServe(['--port', '0', '--config', join(vm, 'switchyard.yaml')])
    procs.push(serve)
    const list = await run(['accounts', 'list', '--json', '--config', '../vm/switchyard.yaml'], elsewhere)
    expect(list.code).toBe(0)
    expect(JSON.parse(list.stdout).map((a: { name: string }) => a.name)).toEqual(['alice'])
    expect(existsSync(join(elsewhere, 'data'))).toBe(false)
    // serve, started from the test's folder, uses the same file: a key made there works on it.
    const key = JSON.parse(
      (await run(['keys', 'create', 'alice', '--json', '--config', '../vm/switchyard.yaml'], elsewhere))
        .stdout,
    ).key
    const usage = await fetch(`${serve.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })
    expect(usage.status).toBe(200)
    await serve.kill()
  }, 20_000)

  test('provider secrets are needed by serve and config check only, not by migrate', async () => {
    const dir = tempDir()
    const doc = testConfigDoc()
    ;(doc.providers as unknown[]).push({
      prefix: 'openai',
      kind: 'openai',
      base_url: 'http://127.0.0.1:1/v1',
      api_key: '${SWITCHYARD_TEST_UNSET_KEY}',
      models: [{ name: 'm', context_window: 1000, max_output_tokens: 100, features: [] }],
    })
    const config = writeConfig(dir, doc)
    const env = { SWITCHYARD_TEST_UNSET_KEY: undefined }
    expect((await cli(['accounts', 'create', 'bob', '--config', config], env)).code).toBe(0)
    expect((await cli(['accounts', 'list', '--config', config], env)).stdout).toContain('bob')
    expect((await cli(['models', '--config', config], env)).code).toBe(0)
    // A schema migration (a deploy's pre-start job) touches no provider: it was refused for the key.
    const migrate = await cli(['migrate', '--json', '--config', config, '--db', join(dir, 'm.db')], env)
    expect(migrate.stderr).toBe('')
    expect(migrate.code).toBe(0)
    const check = await cli(['config', 'check', '--config', config], env)
    expect(check.code).toBe(1)
    expect(check.stderr).toContain('SWITCHYARD_TEST_UNSET_KEY')
    const serve = await cli(['serve', '--config', config], env)
    expect(serve.code).toBe(1)
    expect(serve.stderr).toContain('SWITCHYARD_TEST_UNSET_KEY')
  })

  test('--days 0 expires the plan now; --expires-at sets the end', async () => {
    const dir = tempDir()
    const base = ['--config', writeConfig(dir, testConfigDoc())]
    const a = (
      await cli(['accounts', 'create', 'eve', '--plan', 'pro', '--days', '0', '--json', ...base])
    ).json()
    // pro downgrades to free at its end: the first look applies it.
    expect(a).toMatchObject({ plan: 'free' })
    const show = (await cli(['accounts', 'show', 'eve', '--json', ...base])).json()
    expect(show.plan_history.map((h: { reason: string }) => h.reason)).toEqual([
      'created',
      'expired: pro downgraded to free',
    ])
    const at = '2031-02-03T04:05:06.000Z'
    const b = (
      await cli(['accounts', 'set-plan', 'eve', 'basic', '--expires-at', at, '--json', ...base])
    ).json()
    expect(b).toMatchObject({ plan: 'basic', plan_expires_at: at })
    const bad = await cli(['accounts', 'set-plan', 'eve', 'basic', '--expires-at', 'soon', ...base])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('--expires-at')
  })

  test('serve warns at start about accounts on a plan removed from the config', async () => {
    const dir = tempDir()
    const config = writeConfig(dir, testConfigDoc())
    expect((await cli(['accounts', 'create', 'gold-user', '--plan', 'basic', '--config', config])).code).toBe(
      0,
    )
    const { basic: _removed, ...rest } = PLANS
    writeConfig(dir, testConfigDoc({ plans: rest }))
    const serve = await spawnServe(['--port', '0', '--config', config])
    procs.push(serve)
    await serve.kill('SIGTERM')
    const log = await new Response(serve.proc.stderr as ReadableStream).text()
    const warn = log
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .find((l) => l.level === 'warn' && l.plan === 'basic')
    expect(warn.accounts).toEqual(['gold-user'])
  }, 20_000)
})

describe('serve that cannot start ends', () => {
  test.each([[[]], [['--workers', '2']]])(
    'a taken port exits 1 naming --port, PORT and server.port, within 5 s and a few CLI starts (serve %p)',
    async (extra) => {
      const blocker = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('taken') })
      try {
        const dir = tempDir()
        writeFileSync(join(dir, 'switchyard.yaml'), JSON.stringify(testConfigDoc()))
        // The baseline, in the same moment: a process of the same CLI that starts and ends at once.
        const b0 = performance.now()
        expect((await run(['--version'], dir)).code).toBe(0)
        const baseline = performance.now() - b0
        const t0 = performance.now()
        const r = await run(['serve', '--port', String(blocker.port), ...(extra as string[])], dir)
        const ms = performance.now() - t0
        // Exit 1 naming the port and every way to set it (what serve-start.test.ts checked on a run
        // of its own, the same `serve` on a taken port).
        expect(r.code).toBe(1)
        expect(r.stderr).toContain(`cannot listen on 127.0.0.1:${blocker.port}`)
        expect(r.stderr).toContain('--port, env PORT or server.port')
        // It ends rather than hanging (a port it cannot bind left it running): within 5 s of a quiet
        // machine plus a few of the baseline's starts where the load stretches each start (at load
        // 20+ the exit took 6.5 s with two workers and 14 s without).
        console.log(
          `taken port ${JSON.stringify(extra)}: exited in ${ms.toFixed(0)} ms, --version ${baseline.toFixed(0)} ms`,
        )
        expect(ms).toBeLessThan(5_000 + 5 * baseline)
      } finally {
        await blocker.stop(true)
      }
    },
    60_000,
  )
})
