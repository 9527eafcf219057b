/**
 * With `--json` every command prints exactly one JSON document (DESIGN §2), and every error is one
 * JSON line with a real code (docs/command-line.md). Audit 65a: `init` on an existing file, `serve`
 * that cannot listen and `reload` with no serve file said `{"code": "error"}`; `switchyard --json`
 * printed the plain help, and `models --help --json` plain text.
 */
import { describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cli, cliProcess, REPO } from '../support/cli.ts'
import { tempDir, testConfigDoc } from '../support/config-doc.ts'
import { UNSUPERVISED, writeConfig } from '../support/process.ts'

const dir = tempDir()
const config = writeConfig(dir, testConfigDoc({ database: { path: join(dir, 'db.sqlite') } }))

/** The one JSON error line on stderr, stdout empty. */
function errorLine(r: { stdout: string; stderr: string }): { message: string; type: string; code: string } {
  expect(r.stdout).toBe('')
  const lines = r.stderr.trim().split('\n')
  expect(lines).toHaveLength(1)
  return JSON.parse(lines[0]!).error
}

describe('--json errors name what failed', () => {
  test('init on a file that exists → file_exists', async () => {
    writeFileSync(join(dir, 'taken.yaml'), 'server: {}\n')
    const r = await cliProcess(['init', '--config', join(dir, 'taken.yaml'), '--json'])
    expect(r.code).toBe(1)
    expect(errorLine(r)).toMatchObject({ code: 'file_exists', type: 'file_exists' })
  })

  test('reload with no serve file → gateway_not_found', async () => {
    const r = await cliProcess(['reload', '--config', config, '--json'])
    expect(r.code).toBe(1)
    expect(errorLine(r)).toMatchObject({ code: 'gateway_not_found' })
  })

  test('reload whose only gateway does not answer → gateway_unreachable', async () => {
    const own = tempDir()
    const db = join(own, 'db.sqlite')
    const path = writeConfig(own, testConfigDoc({ database: { path: db } }))
    // A serve file of a running process (this one) whose address no longer answers.
    const closed = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
    const url = `http://127.0.0.1:${closed.port}`
    closed.stop(true)
    writeFileSync(`${db}.${process.pid}.serving`, JSON.stringify({ pid: process.pid, url, token: 'x' }), {
      mode: 0o600,
    })
    const r = await cliProcess(['reload', '--config', path, '--json'])
    expect(r.code).toBe(1)
    expect(errorLine(r)).toMatchObject({ code: 'gateway_unreachable' })
  })

  test('serve on a port in use → listen_failed', async () => {
    const held = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
    try {
      const r = await cliProcess(['serve', '--config', config, '--port', String(held.port), '--json'], {
        env: UNSUPERVISED,
      })
      expect(r.code).toBe(1)
      const e = errorLine({
        stdout: r.stdout,
        stderr: r.stderr
          .split('\n')
          .filter((l) => l.includes('"error":{'))
          .join('\n'),
      })
      expect(e).toMatchObject({ code: 'listen_failed' })
      expect(e.message).toContain(`port ${held.port} is in use`)
    } finally {
      held.stop(true)
    }
  })

  // Cheap, and it covers the paths a test cannot easily reach (a worker that dies before it
  // listens): a command's own failure is a CliError with its code, a UsageError, a ConfigError or a
  // GatewayError, never a plain Error, which `--json` can only call `internal_error`.
  test('no command throws a plain Error', () => {
    const files = [
      join(REPO, 'src/main.ts'),
      ...readdirSync(join(REPO, 'src/cli')).map((f) => join(REPO, 'src/cli', f)),
    ]
    const plain = files.flatMap((f) =>
      readFileSync(f, 'utf8')
        .split('\n')
        .flatMap((line) =>
          /throw new Error\b/.test(line) ? [`${f.slice(REPO.length)}: ${line.trim()}`] : [],
        ),
    )
    // Caught where it is called (serving.ts logs it and serves on): no command ends with it.
    const caught = ["src/cli/serve-file.ts: throw new Error(passed.join('; '))"]
    expect(plain).toEqual(caught)
  })
})

describe('--json prints JSON, help too', () => {
  test('switchyard --json with no command: the usage_error line, exit 2', async () => {
    const r = await cli(['--json'])
    expect(r.code).toBe(2)
    expect(errorLine(r)).toMatchObject({ code: 'usage_error', type: 'usage_error' })
  })

  test('--help --json and help X --json: {"usage": TEXT} on stdout, exit 0', async () => {
    for (const [args, says] of [
      [['models', '--help', '--json'], 'models'],
      [['help', 'keys', '--json'], 'keys create ACCOUNT'],
      [['--help', '--json'], 'Usage: switchyard <command>'],
    ] as const) {
      const r = await cli([...args])
      expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 0, stderr: '' })
      expect(JSON.parse(r.stdout).usage).toContain(says)
    }
  })
})
