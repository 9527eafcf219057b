/**
 * Arguments no command takes are errors (exit 2) that name them, never silently dropped:
 * `serve -p 18123` listened on the config's port, `keys create dr -n ci` made a key named null,
 * `accounts create x1 y1` and `config check extra` succeeded.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { cli, cliProcess } from '../support/cli.ts'
import { tempDir, testConfigDoc } from '../support/config-doc.ts'
import { writeConfig } from '../support/process.ts'

const dir = tempDir()
const config = writeConfig(dir, testConfigDoc())
const base = ['--config', config, '--db', join(dir, 'cli.db')]
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const accountNames = async () =>
  (await cli(['accounts', 'list', '--json', ...base])).json().map((a: { name: string }) => a.name)

describe('short flags', () => {
  test('serve -p is an error naming -p and --port, not a server on the config port', async () => {
    const r = await cliProcess(['serve', '-p', '18123', '--json', ...base], { timeoutMs: 10_000 })
    expect(r.code).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr).toContain('unknown flag -p')
    expect(r.stderr).toContain('--port')
  }, 20_000)

  test('keys create dr -n ci is an error suggesting --name, and makes no key', async () => {
    expect((await cli(['accounts', 'create', 'dr', ...base])).code).toBe(0)
    const r = await cli(['keys', 'create', 'dr', '-n', 'ci', ...base])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('unknown flag -n')
    expect(r.stderr).toContain('did you mean --name?')
    expect((await cli(['keys', 'list', 'dr', '--json', ...base])).json()).toEqual([])
  })

  test('a short flag that could be two long ones names both; one like none names none', async () => {
    const two = await cli(['accounts', 'create', 'x', '-d', '3', ...base])
    expect(two.code).toBe(2)
    expect(two.stderr).toContain('did you mean --days or --db?')
    const none = await cli(['models', '-q', ...base])
    expect(none.code).toBe(2)
    expect(none.stderr).toContain('unknown flag -q')
    expect(none.stderr).not.toContain('did you mean')
    expect(await accountNames()).not.toContain('x')
  })

  test('-h is still help; a negative number after a flag is its value, refused for its range', async () => {
    const h = await cli(['keys', '-h'])
    expect(h.code).toBe(0)
    expect(h.stdout).toContain('--name LABEL')
    const neg = await cli(['accounts', 'create', 'neg', '--days', '-1', ...base])
    expect(neg.code).toBe(2)
    expect(neg.stderr).toContain("--days must be a whole number from 0 to 36500, got '-1'")
  })
})

describe('positionals a command does not take', () => {
  const cases: Array<[string, string[], string]> = [
    ['accounts create x1 y1', ['accounts', 'create', 'x1', 'y1'], "'y1'"],
    ['accounts list extra', ['accounts', 'list', 'extra'], "'extra'"],
    ['accounts show a b', ['accounts', 'show', 'dr', 'b'], "'b'"],
    ['accounts set-plan a b c', ['accounts', 'set-plan', 'dr', 'free', 'c'], "'c'"],
    ['accounts disable a b', ['accounts', 'disable', 'dr', 'b'], "'b'"],
    ['keys create a b', ['keys', 'create', 'dr', 'b'], "'b'"],
    ['keys list a b', ['keys', 'list', 'dr', 'b'], "'b'"],
    ['keys revoke id b', ['keys', 'revoke', 'key_x', 'b'], "'b'"],
    ['keys set-limits id b', ['keys', 'set-limits', 'key_x', 'b', '--tpm', '5'], "'b'"],
    ['sessions list extra', ['sessions', 'list', 'extra'], "'extra'"],
    ['sessions revoke a b', ['sessions', 'revoke', 'a', 'b'], "'b'"],
    ['usage a b', ['usage', 'dr', 'b'], "'b'"],
    ['models extra', ['models', 'extra'], "'extra'"],
    ['config check extra', ['config', 'check', 'extra'], "'extra'"],
    ['migrate extra', ['migrate', 'extra'], "'extra'"],
  ]
  test.each(cases)('%s is an error naming the extra word', async (_, args, named) => {
    const r = await cli([...args, ...base])
    expect(r.code).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr).toContain(`unexpected argument ${named}`)
    expect(r.stderr).toContain('Usage: switchyard')
  })

  test('accounts create x1 y1 creates nothing', async () => {
    expect(await accountNames()).not.toContain('x1')
  })

  test('init and serve refuse them too', async () => {
    const init = await cli(['init', 'extra', '--path', join(dir, 'init', 'switchyard.yaml')])
    expect(init.code).toBe(2)
    expect(init.stderr).toContain("unexpected argument 'extra'")
    const serve = await cliProcess(['serve', 'extra', '--port', '0', ...base], { timeoutMs: 10_000 })
    expect(serve.code).toBe(2)
    expect(serve.stderr).toContain("unexpected argument 'extra'")
  }, 20_000)
})

describe('flag values that were silently taken for something else', () => {
  test('--json=false is an error, not JSON output', async () => {
    const r = await cli(['accounts', 'list', '--json=false', ...base])
    expect(r.code).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr).toContain('--json takes no value')
    expect((await cli(['--version=1'])).stderr).toContain('--version takes no value')
  })

  test('an empty --db, --config or --host is an error, never the config file’s or the default', async () => {
    // `--db ''` opened the config's database, `--host ''` listened on 127.0.0.1.
    for (const args of [
      ['accounts', 'list', '--config', config, '--db', ''],
      ['accounts', 'list', '--config', config, '--db='],
      ['accounts', 'list', '--config', ''],
      ['keys', 'create', 'dr', '--name', '', ...base],
    ]) {
      const r = await cli(args)
      expect(r.code).toBe(2)
      expect(r.stdout).toBe('')
      expect(r.stderr).toMatch(/error: --(db|config|name) needs a value/)
    }
    const serve = await cliProcess(['serve', '--host', '', '--port', '0', ...base], { timeoutMs: 10_000 })
    expect(serve.code).toBe(2)
    expect(serve.stderr).toContain('--host needs a value')
  }, 20_000)
})

// `accounts create x --plan` (no value) read the flag inside the audited change: a usage error
// (exit 2) logged an audit line `accounts create x: error` for a change never tried.
test('a flag without its value is a usage error before any audit line', async () => {
  const r = await cli(['accounts', 'create', 'noplan', '--plan', ...base])
  expect(r.code).toBe(2)
  expect(r.stderr).toBe('error: --plan needs a value\n')
  expect(await accountNames()).not.toContain('noplan')
})

describe('before the command', () => {
  // `switchyard -p 80 serve` said "unknown command '80'": the flag is what is wrong.
  test('a short flag before the command is named, not its value taken for the command', async () => {
    const r = await cli(['-p', '80', 'serve'])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('unknown flag -p')
    expect(r.stderr).not.toContain("unknown command '80'")
  })

  // `switchyard frob --help` and `switchyard help frob` printed the global help with exit 0, as if
  // frob were a command.
  test('help for a command that does not exist is an unknown command, exit 2', async () => {
    for (const args of [
      ['frob', '--help'],
      ['help', 'frob'],
      ['frob', '-h'],
    ]) {
      const r = await cli(args)
      expect(r.code).toBe(2)
      expect(r.stdout).toBe('')
      expect(r.stderr).toContain("unknown command 'frob'")
    }
    expect((await cli(['help', 'keys'])).stdout).toContain('keys create ACCOUNT')
    expect((await cli(['help'])).code).toBe(0)
  })

  // No command printed the help on stdout with exit 2: an error's text belongs on stderr.
  test('no command: the help on stderr, exit 2; --help: on stdout, exit 0', async () => {
    const none = await cli([])
    expect(none.code).toBe(2)
    expect(none.stdout).toBe('')
    expect(none.stderr).toContain('Usage: switchyard <command>')
    const help = await cli(['--help'])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('Usage: switchyard <command>')
  })
})
