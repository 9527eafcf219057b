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
