/**
 * Audit finding 10: the reference config in README's Configuration section is a config
 * `config check` passes. It named a fallback (`anthropic/claude-haiku-4-5`) no provider in it
 * configured, so anyone starting from it got an error. And the command table's `init` row names
 * every plan the starter config has (it said free/basic/pro; the starter has dev too).
 */
import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { loadConfigFile } from '../../src/config/index.ts'
import { cli, REPO } from '../support/cli.ts'
import { tempDir } from '../support/config-doc.ts'
import { loadText } from './problems.ts'

const README = await Bun.file(join(REPO, 'README.md')).text()
const section = README.slice(README.indexOf('## Configuration'))
const REFERENCE = /```yaml\n([\s\S]*?)```/.exec(section)![1]!
const SECRETS = { OPENAI_API_KEY: 'sk-test', ANTHROPIC_API_KEY: 'sk-ant-test' }

describe("README's reference config", () => {
  test('passes config check with its provider keys set', async () => {
    const f = join(tempDir(), 'switchyard.yaml')
    await Bun.write(f, REFERENCE)
    const r = await cli(['config', 'check', '--config', f], SECRETS)
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
  })

  test('loads for the commands that never serve with no secret set', async () => {
    const c = await loadText(REFERENCE, {}, { secrets: false })
    expect(Object.keys(c.plans)).toEqual(['free', 'basic', 'pro'])
  })
})

test("README's init row names every plan of the starter config", async () => {
  const starter = await loadConfigFile(join(REPO, 'switchyard.example.yaml'), {})
  const row = README.split('\n').find((l) => l.startsWith('| `init'))!
  for (const plan of Object.keys(starter.plans)) expect(row).toContain(plan)
})
