/**
 * Codex's remote compaction through the gateway, with the real Codex CLI (test/clients), offline on
 * the demo model. Codex compacts remotely for a provider it takes for OpenAI's (named "OpenAI"):
 * version 0.169 sends its history to `POST /v1/responses` ending in a `compaction_trigger` item and
 * keeps the one `compaction` item of the answer, which later turns send back. A translated route
 * refused the trigger (400: "an item only OpenAI's Responses API understands") and Codex failed
 * the turn with "Error running remote compact task". Now the trigger asks the model for a summary,
 * the answer carries it as the `compaction` item, and the next turn reads it back.
 * (`POST /v1/responses/compact`, which other versions call, is responses-compact.test.ts's.)
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { REPO } from '../../../support/cli.ts'
import { codexBinary, runCodex } from '../../../support/codex.ts'
import { startGateway, type TestGateway, testConfigDoc } from '../../../support/gateway.ts'

const codex = codexBinary()
if (!codex) console.log('Codex is not installed (npm install --prefix test/clients): skipping its compaction')

let gw: TestGateway
let key: string
const dirs = { home: '', work: '' }

beforeAll(async () => {
  const starter = Bun.YAML.parse(
    readFileSync(join(REPO, 'switchyard.example.yaml'), 'utf8').replaceAll(
      '${SWITCHYARD_ADMIN_TOKEN}',
      'x'.repeat(40),
    ),
  ) as { providers: unknown[]; plans: Record<string, unknown> }
  gw = await startGateway({ doc: testConfigDoc({ providers: starter.providers, plans: starter.plans }) })
  key = (await gw.key('codex-user', 'dev')).key
  dirs.home = mkdtempSync(join(tmpdir(), 'switchyard-codex-'))
  dirs.work = mkdtempSync(join(tmpdir(), 'switchyard-codex-work-'))
})
afterAll(async () => {
  await gw.stop()
  for (const d of Object.values(dirs)) if (d) rmSync(d, { recursive: true, force: true })
})

test.skipIf(!codex)(
  'a session past its auto-compact limit compacts through the gateway, and goes on',
  async () => {
    const run = (prompt: string, resume: boolean) =>
      runCodex(codex!, {
        baseUrl: `${gw.url}/v1`,
        key,
        model: 'demo/agent',
        prompt,
        dirs,
        resume,
        // Remote compaction, and a limit the first turn's tokens pass.
        config: ['model_providers.switchyard.name="OpenAI"', 'model_auto_compact_token_limit=200'],
      })
    const first = await run('say hi', false)
    expect(first.code).toBe(0)
    expect(first.stdout).toContain('Echo: say hi')
    const second = await run('say hi again', true)
    expect(second.stderr).not.toContain('Error running remote compact task')
    expect(second.stderr).toContain('context compacted')
    expect(second.code).toBe(0)
    expect(second.stdout).toContain('Echo: say hi again')
    // The turn, the compaction, the turn after it (its history holds the compaction item): all answered.
    const access = gw.logs
      .map((l) => JSON.parse(l) as { msg?: string; path?: string; status?: number })
      .filter((l) => l.msg === 'access' && l.path === '/v1/responses')
    expect(access.map((l) => l.status)).toEqual([200, 200, 200])
  },
  150_000,
)
