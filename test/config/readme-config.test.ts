/**
 * Audit finding 10: the reference config of the Configuration page (docs/configuration.md, the
 * README's "Configuration" section before issue 47) is a config
 * `config check` passes. It named a fallback (`anthropic/claude-haiku-4-5`) no provider in it
 * configured, so anyone starting from it got an error. And the command table's `init` row
 * (docs/command-line.md) names every plan the starter config has (it said free/basic/pro; the
 * starter has dev too).
 */
import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { loadConfigFile } from '../../src/config/index.ts'
import { cli, REPO } from '../support/cli.ts'
import { tempDir } from '../support/config-doc.ts'
import { blockAfter, doc } from '../support/docs.ts'
import { loadText } from './problems.ts'

const REFERENCE = blockAfter('# Configuration', 'yaml', ['docs/configuration.md']).text
const SECRETS = { OPENAI_API_KEY: 'sk-test', ANTHROPIC_API_KEY: 'sk-ant-test' }

describe("the Configuration page's reference config", () => {
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

test("the command table's init row names every plan of the starter config", async () => {
  const starter = await loadConfigFile(join(REPO, 'switchyard.example.yaml'), {})
  const row = doc('docs/command-line.md')
    .split('\n')
    .find((l) => l.startsWith('| `init'))!
  for (const plan of Object.keys(starter.plans)) expect(row).toContain(plan)
})
