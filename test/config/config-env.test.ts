/**
 * `${VAR}` placeholders and the environment (DESIGN §3, README "Configuration").
 * Audit finding 3: the account, key, usage and model commands failed when the admin token's
 * variable was unset — only provider secrets were excused for commands that never serve.
 */
import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { cli } from '../support/cli.ts'
import { tempDir } from '../support/config-doc.ts'
import { loadText, textProblems } from './problems.ts'

/** DESIGN §3's own example, admin token and provider key from the environment. */
const DESIGN = `
server:   { host: 127.0.0.1, port: 8080 }
database: { path: ./data/switchyard.db }
admin:    { token: \${SWITCHYARD_ADMIN_TOKEN} }
providers:
  - prefix: demo
    kind: demo
    models:
      - { name: echo, context_window: 8192, max_output_tokens: 1024,
          features: [streaming, tools, json_mode, system_messages], tier: free }
  - prefix: openai
    kind: openai
    base_url: https://api.openai.com/v1
    api_key: \${OPENAI_API_KEY}
    models:
      - { name: gpt-4o-mini, context_window: 128000, max_output_tokens: 16384, features: [streaming] }
plans:
  free:  { rpm: 5,  rpd: 100,  models: ["tier:free"] }
default_plan: free
`

describe('secrets only serve needs', () => {
  test('without the admin token or provider key set, commands that never serve load the config (admin off)', async () => {
    const c = await loadText(DESIGN, {}, { secrets: false })
    expect(c.admin.token).toBeNull()
    expect(c.providers[1]!.api_key).toBe('')
    // serve and config check still need both
    expect((await textProblems(DESIGN, {})).map((p) => p.path)).toEqual([
      '/admin/token',
      '/providers/1/api_key',
    ])
  })

  test('accounts list and models work with SWITCHYARD_ADMIN_TOKEN unset', async () => {
    const dir = tempDir()
    const f = join(dir, 'design.yaml')
    await Bun.write(f, DESIGN)
    const db = join(dir, 'db.sqlite')
    for (const args of [['accounts', 'list'], ['models']]) {
      const r = await cli([...args, '--config', f, '--db', db], { OPENAI_API_KEY: 'sk-test' })
      expect(r.stderr, args[0]).toBe('')
      expect(r.code, args[0]).toBe(0)
    }
    const check = await cli(['config', 'check', '--config', f], { OPENAI_API_KEY: 'sk-test' })
    expect(check.code).toBe(1)
    expect(check.stderr).toContain('/admin/token: environment variable SWITCHYARD_ADMIN_TOKEN is not set')
  })
})

/**
 * An unset variable where its empty value is no valid setting (`base_url: ${BASE}`, a
 * `context_window: ${CW}`): the commands that excuse provider variables said only "Expected
 * string to match '^https?://'" / "Expected integer", naming no variable.
 */
describe('an excused variable whose empty value is invalid', () => {
  const DOC = `
providers:
  - prefix: up
    kind: openai
    base_url: \${SY_TEST_BASE}
    api_key: \${SY_TEST_KEY}
    models:
      - { name: m, context_window: \${SY_TEST_CW}, max_output_tokens: 100, features: [streaming] }
plans:
  free: { rpm: 5, rpd: null, models: ["*"] }
default_plan: free
`
  test('is named as the unset variable, not by the schema', async () => {
    const problems = await textProblems(DOC, {}, { secrets: false })
    expect(problems).toEqual([
      {
        path: '/providers/0/base_url',
        message: expect.stringContaining('environment variable SY_TEST_BASE is not set'),
      },
      {
        path: '/providers/0/models/0/context_window',
        message: expect.stringContaining('environment variable SY_TEST_CW is not set'),
      },
    ])
  })

  test('a set one loads; the unset key is still excused', async () => {
    const c = await loadText(
      DOC,
      { SY_TEST_BASE: 'http://127.0.0.1:1/v1', SY_TEST_CW: '1000' },
      { secrets: false },
    )
    expect(c.providers[0]!.api_key).toBe('')
  })
})

/**
 * Audit finding 2: a `${…}` that was not a well-formed placeholder stayed in the value as text —
 * `${ADMIN_TOKEN:0123…}` (':' for ':-') turned the admin API on with a token anyone reading the
 * file knows. Every `${` is now a placeholder, the escape `$${`, or an error with its path.
 */
describe('placeholders', () => {
  const withToken = (token: string, extra = '') =>
    `admin:\n  token: ${token}\n${extra}providers:\n  - prefix: demo\n    kind: demo\n    models:\n      - { name: echo, context_window: 10, max_output_tokens: 1, features: [streaming] }\nplans:\n  free: { rpm: 1, rpd: 1, models: ["*"] }\ndefault_plan: free\n`

  test('the audit file: each malformed placeholder is an error with its path and the expected form', async () => {
    const found = await textProblems(
      `admin:
  token: \${ADMIN_TOKEN:0123456789abcdef0123456789abcdef}
providers:
  - prefix: openai
    kind: openai
    base_url: https://api.openai.com/v1
    api_key: \${OPENAI-API-KEY}
    headers: { x-org: "\${ ORG }" }
    models:
      - { name: gpt-4o-mini, context_window: 128000, max_output_tokens: 16384, features: [streaming] }
plans:
  free:  { rpm: 5,  rpd: 100,  models: ["*"] }
default_plan: free
`,
      { ADMIN_TOKEN: 'x'.repeat(40), ORG: 'org-1', OPENAI: 'sk' },
    )
    expect(found.map((p) => p.path)).toEqual([
      '/admin/token',
      '/providers/0/api_key',
      '/providers/0/headers/x-org',
    ])
    for (const p of found) expect(p.message).toContain('write ${NAME} or ${NAME:-default}')
    // named, but not the default it carried (it may be a secret)
    expect(found[0]!.message).toStartWith("'${ADMIN_TOKEN:...}' is not a placeholder")
    expect(found[0]!.message).not.toContain('0123')
    expect(found[1]!.message).toStartWith("'${OPENAI-API-KEY}' is not a placeholder")
  })

  test.each([
    ['unclosed', 'abc${FOO'],
    ['nested default', '${A:-${B}}'],
    ['empty', 'x${}'],
    ['digit first', '${1X}'],
  ])('%s: an error too', async (_, text) => {
    const found = await textProblems(withToken(JSON.stringify(text)), { A: 'a', B: 'b', FOO: 'f' })
    expect(found).toEqual([
      { path: '/admin/token', message: expect.stringContaining('is not a placeholder') },
    ])
  })

  test('a malformed placeholder is an error even where an unset one is excused', async () => {
    expect(await textProblems(withToken('${ADMIN:oops}'), {}, { secrets: false })).toHaveLength(1)
  })

  test('$${ writes a literal ${, in block and flow style; a lone $ or $$ is left alone', async () => {
    const c = await loadText(
      withToken(
        "'$${NOT_A_VAR}-and-${A}-0123456789abcdef'",
        'server: { host: $${H} }\ndatabase: { path: pa$$word$x.db }\n',
      ),
      { A: 'a', H: 'h' },
      // As the commands other than serve read it: serve refuses a host that is no address's form.
      { secrets: false },
    )
    expect(c.admin.token).toBe('${NOT_A_VAR}-and-a-0123456789abcdef')
    expect(c.server.host).toBe('${H}')
    expect(c.database.path).toEndWith('pa$$word$x.db')
  })

  test('a flow-style placeholder whose default holds a backslash is read as written', async () => {
    const c = await loadText(withToken('x'.repeat(32), 'database: { path: ${DBP:-C:\\data\\x.db} }\n'))
    expect(c.database.path).toEndWith('C:\\data\\x.db')
  })
})

/**
 * Audit finding 8: `port: ${MYPORT}` with MYPORT=abc said only `/server/port: Expected integer`,
 * and an all-digit value where a string belongs (`api_key: ${OPENAI_API_KEY}` = 12345) became a
 * number and failed as one. A value takes the type its text spells only where a string is not
 * what the setting holds, and a value from the environment that fails names its variable.
 */
describe('values from the environment', () => {
  const base = (extra: string) =>
    `${extra}providers:
  - prefix: openai
    kind: openai
    api_key: \${OPENAI_API_KEY}
    models:
      - { name: gpt, context_window: 10, max_output_tokens: 1, features: [streaming] }
plans:
  free: { rpm: \${RPM:-5}, rpd: \${RPD:-null}, models: ["*"] }
default_plan: free
`

  test('a value that is not what the setting takes names its variable', async () => {
    const found = await textProblems(base('server: { port: ${MYPORT} }\n'), {
      MYPORT: 'abc',
      OPENAI_API_KEY: 'sk',
    })
    expect(found).toEqual([
      { path: '/server/port', message: expect.stringContaining('environment variable MYPORT') },
    ])
    const url = await textProblems(base('database: { url: "${PGSCHEME}://u@h/db" }\n'), {
      PGSCHEME: 'mysql',
      OPENAI_API_KEY: 'sk',
    })
    expect(url).toEqual([
      { path: '/database/url', message: expect.stringContaining('environment variable PGSCHEME') },
    ])
  })

  test('a value written in the file (or a default) that fails names no variable', async () => {
    const [p] = await textProblems(base('server: { port: ${MYPORT:-abc} }\n'), { OPENAI_API_KEY: 'sk' })
    expect(p!.message).not.toContain('environment')
  })

  test('an all-digit or true/false value stays a string where the setting is a string', async () => {
    const token = '1234567890'.repeat(4)
    const c = await loadText(base('admin: { token: ${TOKEN} }\nserver: { host: ${H} }\n'), {
      OPENAI_API_KEY: '12345',
      TOKEN: token,
      H: 'true',
    })
    expect(c.providers[0]!.api_key).toBe('12345')
    expect(c.admin.token).toBe(token)
    expect(c.server.host).toBe('true')
  })

  test('and takes the type its text spells where the setting is not (null included)', async () => {
    const c = await loadText(base('server: { port: ${P} }\nlogging: { access: ${ACCESS} }\n'), {
      OPENAI_API_KEY: 'sk',
      P: '9001',
      ACCESS: 'false',
      RPM: '7',
    })
    expect(c.server.port).toBe(9001)
    expect(c.logging.access).toBe(false)
    expect(c.plans.free).toMatchObject({ rpm: 7, rpd: null })
  })
})
