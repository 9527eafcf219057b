/**
 * Gemini CLI itself, non-interactive (`-p`), against the real gateway on port 0 (DESIGN §14), set
 * up as docs/agents.md shows (GOOGLE_GEMINI_BASE_URL, GEMINI_API_KEY, the API-key auth in
 * settings.json): a tool round trip on the demo model, offline (the CLI runs `list_directory`
 * and sends its result back); a turn through a gemini provider (pass-through,
 * the recorded stream); through openai and anthropic providers (translated). Every request is on
 * the gemini surface, counted once.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import {
  GEMINI,
  type GeminiBed,
  OPENAI_TEXT,
  runGemini,
  startGeminiBed,
} from '../../../support/gemini-bed.ts'

if (!GEMINI)
  console.log(
    'Gemini CLI is not installed (npm install --prefix test/clients): skipping test/e2e/surfaces/gemini/gemini-cli.test.ts.',
  )

let bed: GeminiBed

/** docs/agents.md's Gemini CLI setup, as pasted: the two exports, the model, settings.json. */
const AGENTS = await Bun.file(new URL('../../../../docs/agents.md', import.meta.url)).text()
const SECTION = AGENTS.slice(AGENTS.indexOf('### Gemini CLI'), AGENTS.indexOf('### opencode'))
const SH = /```sh\n([\s\S]*?)```/.exec(SECTION)![1]!
const DOC_MODEL = /^gemini -m (\S+)/m.exec(SH)![1]!
const DOC_SETTINGS = /```json\n([\s\S]*?)```/.exec(SECTION)![1]!

test('the documented setup is what these runs use', () => {
  const exported = [...SH.matchAll(/^export (\w+)=/gm)].map((m) => m[1])
  // runGemini sets exactly these two (and GEMINI_CLI_TRUST_WORKSPACE, the documented caveat).
  expect(exported).toEqual(['GOOGLE_GEMINI_BASE_URL', 'GEMINI_API_KEY'])
  expect(SECTION).toContain('GEMINI_CLI_TRUST_WORKSPACE=true')
  expect(JSON.parse(DOC_SETTINGS)).toEqual({ security: { auth: { selectedType: 'gemini-api-key' } } })
  expect(DOC_MODEL).toBe('demo/agent')
})

beforeAll(async () => {
  if (GEMINI) bed = await startGeminiBed()
})
afterAll(async () => {
  await bed?.stop()
})

async function requestsOf(key: string): Promise<number> {
  const res = await fetch(`${bed.gw.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })
  return ((await res.json()) as { usage: { current_day: { requests: number } } }).usage.current_day.requests
}

/**
 * Model, prompt, what the CLI prints, the requests the turn takes. The demo's turn is the tool
 * round trip, on the documented model: its first request is a plain turn (the demo reads the
 * call from the user's words), its second the functionResponse, answered in text the CLI prints.
 * A separate "say hi" on the demo proved nothing more (a whole CLI start, ~2.5 s of CPU); the
 * demo's echo on this surface is gemini-sdk.test.ts's.
 */
const TURNS: Array<[string, string, RegExp, number]> = [
  // The demo calls the tool the prompt names; the CLI runs it and sends its functionResponse back.
  [DOC_MODEL, 'Run list_directory with {"dir_path": "."}', /Tool result received: .*Directory listing/, 2],
  ['gemini/text', 'say hi', /There are \*\*3\*\* "r"s in strawberry/, 1],
  ['openai/gpt', 'say hi', new RegExp(OPENAI_TEXT), 1],
  ['anthropic/text', 'say hi', /Hello! I'm doing well/, 1],
]

test.skipIf(!GEMINI)(
  'completes a tool round trip on the demo and a turn through gemini, openai and anthropic providers',
  async () => {
    // Concurrently: each run is mostly the CLI starting up.
    const runs = await Promise.all(
      TURNS.map(async ([model, prompt], i) => {
        const { key } = await bed.gw.key(`gemini-cli-${i}`, 'unlimited')
        return { key, run: await runGemini(bed.gw.url, key, prompt, model, DOC_SETTINGS) }
      }),
    )
    for (const [i, { key, run }] of runs.entries()) {
      if (run.code !== 0) console.log(`gemini exited ${run.code}\n${run.stdout}\n${run.stderr}`)
      expect(run.code).toBe(0)
      expect(run.stdout).toMatch(TURNS[i]![2])
      expect(await requestsOf(key)).toBe(TURNS[i]![3])
    }
  },
  180_000,
)
