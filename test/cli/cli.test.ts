import { afterAll, describe, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { BUN, cli, REPO } from '../support/cli.ts'
import { tempDir } from '../support/config-doc.ts'

const dir = tempDir()
const config = join(dir, 'switchyard.yaml')
writeFileSync(config, readExample())
const db = join(dir, 'cli.db')
const base = ['--config', config, '--db', db]

function readExample(): string {
  return require('node:fs').readFileSync(join(REPO, 'switchyard.example.yaml'), 'utf8')
}

describe('command line (--json)', () => {
  test('accounts create / list / show / set-plan / disable / enable', async () => {
    const c = await cli(['accounts', 'create', 'acme', '--plan', 'pro', '--days', '30', '--json', ...base])
    expect(c.code).toBe(0)
    const a = c.json()
    expect(a).toMatchObject({ name: 'acme', plan: 'pro', enabled: true })
    expect(typeof a.id).toBe('number')
    expect(Date.parse(a.plan_expires_at) - Date.parse(a.created_at)).toBe(30 * 86_400_000)
    expect(a.created_at).toMatch(/^\d{4}-\d\d-\d\dT/)

    const free = (await (
      await cli(['accounts', 'create', 'hobby', '--plan', 'free', '--json', ...base])
    ).json()) as any
    expect(free.plan_expires_at).toBeNull()

    const list = await cli(['accounts', 'list', '--json', ...base])
    expect(list.json().map((x: { name: string }) => x.name)).toEqual(['acme', 'hobby'])

    const show = (await (await cli(['accounts', 'show', 'acme', '--json', ...base])).json()) as any
    expect(show).toMatchObject({ name: 'acme', plan: 'pro' })
    expect(show.plan_history[0]).toMatchObject({ plan: 'pro', reason: 'created' })

    const setPlan = (await (
      await cli(['accounts', 'set-plan', 'acme', 'basic', '--days', '10', '--json', ...base])
    ).json()) as any
    expect(setPlan).toMatchObject({ plan: 'basic', remaining_days: 10 })

    expect(
      ((await (await cli(['accounts', 'disable', 'acme', '--json', ...base])).json()) as any).enabled,
    ).toBe(false)
    expect(
      ((await (await cli(['accounts', 'enable', 'acme', '--json', ...base])).json()) as any).enabled,
    ).toBe(true)

    const text = await cli(['accounts', 'list', ...base])
    expect(text.stdout).toContain('acme')
    expect(text.stdout).toContain('NAME')
  })

  test('keys create / list / disable / enable / rotate / revoke', async () => {
    const k = (await (
      await cli(['keys', 'create', 'acme', '--name', 'laptop', '--json', ...base])
    ).json()) as any
    expect(Object.keys(k).sort()).toEqual(['account', 'id', 'key', 'limits', 'name', 'prefix'])
    expect(Object.values(k.limits).every((v) => v === null)).toBe(true)
    expect(k).toMatchObject({ account: 'acme', name: 'laptop' })
    expect(k.key).toMatch(/^sk-sy-[0-9A-Za-z]{40}$/)
    expect(k.key.startsWith(k.prefix)).toBe(true)

    const list = await cli(['keys', 'list', 'acme', '--json', ...base])
    const keys = list.json()
    expect(keys).toHaveLength(1)
    expect(keys[0]).toMatchObject({ id: k.id, name: 'laptop', prefix: k.prefix, state: 'enabled' })
    expect(keys[0]).toHaveProperty('created_at')
    expect(keys[0]).toHaveProperty('last_used_at')
    expect(list.stdout).not.toContain(k.key)

    expect(((await (await cli(['keys', 'disable', k.id, '--json', ...base])).json()) as any).state).toBe(
      'disabled',
    )
    expect(((await (await cli(['keys', 'enable', k.id, '--json', ...base])).json()) as any).state).toBe(
      'enabled',
    )
    const rotated = (await (await cli(['keys', 'rotate', k.id, '--json', ...base])).json()) as any
    expect(rotated.id).toBe(k.id)
    expect(rotated.key).not.toBe(k.key)
    expect(((await (await cli(['keys', 'revoke', k.id, '--json', ...base])).json()) as any).state).toBe(
      'revoked',
    )
    const again = await cli(['keys', 'enable', k.id, ...base])
    expect(again.code).not.toBe(0)
    expect(again.stderr).toContain('revoked')
    expect((await (await cli(['keys', 'list', '--json', ...base])).json()) as any).toHaveLength(1)
  })

  test('usage, models, config check', async () => {
    const u = (await (await cli(['usage', 'hobby', '--json', ...base])).json()) as any
    expect(u).toMatchObject({
      object: 'usage',
      account_information: { name: 'hobby', plan: 'free', is_enabled: true },
      rate_limits: { rpm: 5, rpd: 100 },
    })
    const m = (await (await cli(['models', '--json', ...base])).json()) as any
    expect(m.data.map((x: { id: string }) => x.id)).toContain('demo/echo')
    expect(m.data[0]).toHaveProperty('features')
    // The starter config's embedding model says so, in JSON and in the table.
    expect(m.data.find((x: { id: string }) => x.id === 'demo/embed')).toMatchObject({ type: 'embedding' })
    const table = (await cli(['models', ...base])).stdout.split('\n')
    expect(table[0]).toContain('TYPE')
    expect(table.find((l) => l.startsWith('demo/embed '))).toContain(' embedding ')
    expect(table.find((l) => l.startsWith('demo/echo '))).toContain(' chat ')
    const cc = await cli(['config', 'check', '--json', ...base])
    expect(cc.code).toBe(0)
    expect(cc.json()).toMatchObject({ ok: true })
  })

  test('errors go to stderr with a non-zero exit and say what to do', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['accounts', 'show', 'nobody', ...base], /no account named 'nobody'/],
      [['accounts', 'create', 'x', '--plan', 'gold', ...base], /configured plans/],
      [['accounts', 'create', 'y', '--days', 'ten', ...base], /--days must be a whole number/],
      [['keys', 'disable', 'key_nope', ...base], /no key with id/],
      [['frobnicate', ...base], /unknown command/],
      [['accounts', 'create', ...base], /missing account NAME/],
      [['accounts', 'list', '--bogus', ...base], /unknown flag --bogus/],
    ]
    for (const [args, re] of cases) {
      const r = await cli(args)
      expect(r.code, args.join(' ')).not.toBe(0)
      expect(r.stderr).toMatch(re)
      expect(r.stdout).toBe('')
    }
  })

  // With --json a not-found error was JSON on stderr, but a usage error, a config error, a
  // database that cannot be opened and init's refusal were text: a script could not parse them.
  test('with --json every error is one JSON line on stderr in the error shape', async () => {
    const cases: Array<[string[], string, number]> = [
      [['accounts', 'show', 'nobody', ...base], 'account_not_found', 1],
      [['accounts', 'show', ...base], 'usage_error', 2],
      [['accounts', 'list', '--config', join(dir, 'nope.yaml')], 'invalid_config', 1],
      [['accounts', 'list', '--config', config, '--db', '/dev/null'], 'database_unavailable', 1],
      [['init', '--config', config], 'file_exists', 1],
    ]
    for (const [args, code, exit] of cases) {
      const r = await cli([...args, '--json'])
      expect([args.join(' '), r.code, r.stdout]).toEqual([args.join(' '), exit, ''])
      const lines = r.stderr.trim().split('\n')
      const body = JSON.parse(lines.at(-1)!)
      expect(body.error).toMatchObject({ code, message: expect.any(String) })
    }
    const bad = await cli(['accounts', 'list', '--config', join(dir, 'nope.yaml'), '--json'])
    expect(JSON.parse(bad.stderr).error.problems[0]).toMatchObject({ path: '/' })
  })

  test('env SWITCHYARD_CONFIG / SWITCHYARD_DB are read, flags win', async () => {
    const viaEnv = await cli(['accounts', 'list', '--json'], { SWITCHYARD_CONFIG: config, SWITCHYARD_DB: db })
    expect(viaEnv.json().length).toBe(2)
    const other = join(dir, 'other.db')
    const flagWins = await cli(['accounts', 'list', '--json', '--db', other], {
      SWITCHYARD_CONFIG: config,
      SWITCHYARD_DB: db,
    })
    expect(flagWins.json()).toEqual([])
  })
})

describe('serve as a real process', () => {
  const procs: Array<ReturnType<typeof Bun.spawn>> = []
  afterAll(() => {
    for (const p of procs) p.kill('SIGKILL')
  })

  test('serve --port 0 --json answers /healthz and /v1/usage for a key its own CLI made', async () => {
    const k = (await (await cli(['keys', 'create', 'hobby', '--json', ...base])).json()) as any
    const proc = Bun.spawn([BUN, join(REPO, 'src/main.ts'), 'serve', '--port', '0', '--json', ...base], {
      stdout: 'pipe',
      stderr: 'pipe',
    })
    procs.push(proc)
    const reader = proc.stdout.getReader()
    const { value } = await reader.read()
    const info = JSON.parse(new TextDecoder().decode(value).split('\n')[0]!)
    expect(info.port).toBeGreaterThan(0)
    expect((await fetch(`${info.url}/healthz`)).status).toBe(200)
    const u = await fetch(`${info.url}/v1/usage`, { headers: { authorization: `Bearer ${k.key}` } })
    expect(u.status).toBe(200)
    expect(((await u.json()) as any).account_information.name).toBe('hobby')
    proc.kill('SIGTERM')
    expect(await proc.exited).toBe(0)
  })
})
