/**
 * Qwen Code and opencode themselves, set up as docs/agents.md shows them (each section's `sh` block
 * run as pasted through `sh`, opencode's `opencode.json` written as shown), one-shot, against the
 * real gateway on port 0 with the starter config's demo provider and an OpenAI-compatible chat
 * upstream (scripts/mock-upstream.ts). On the demo, each agent's turn is a tool round trip (Qwen
 * Code runs `run_shell_command`, opencode its `bash`; the command's output goes back and the demo's
 * answer quotes it). Through the upstream: Qwen Code a turn of its own; opencode, in the same run
 * as its round trip, its session-title request — the one request opencode sends to its
 * `small_model`, set to the upstream's model — whose answer, the mock's text, becomes the title
 * opencode stores (a second opencode start, ~16 CPU-s, proved no more). opencode does not wait for
 * that request, so the turn's command waits until the title is stored (titleStored). Under strace
 * (one run of each), every connection the agent opens (DNS included) is to the gateway: the
 * blocks' own lines keep it off the network. One gateway; all runs at once.
 * Each agent is skipped, with a printed line, when the test-client package lacks it.
 */
import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { type MockUpstream, startMockUpstream } from '../../../scripts/mock-upstream.ts'
import { quotePlaceholders } from '../../../src/config/yaml.ts'
import {
  type AgentRun,
  agentsBlock,
  clientBinary,
  localise,
  runAgentBlock,
} from '../../support/agent-block.ts'
import { PLANS, startGateway, type TestGateway } from '../../support/gateway.ts'

const QWEN = clientBinary('qwen')
const OPENCODE = clientBinary('opencode')
for (const [name, bin] of [
  ['Qwen Code', QWEN],
  ['opencode', OPENCODE],
] as const)
  if (!bin)
    console.log(
      `${name} is not installed (npm install --prefix test/clients): skipping its runs in test/e2e/clients/qwen-opencode.test.ts.`,
    )

const QWEN_SH = await agentsBlock('Qwen Code', 'sh')
const OPENCODE_SH = await agentsBlock('opencode', 'sh')
const OPENCODE_JSON = await agentsBlock('opencode', 'json')

test('the documented setups are what these runs use', () => {
  // runAgentBlock runs each block as it stands; pinned here so a change to it is a change here.
  expect(QWEN_SH).toMatch(/^qwen$/m)
  expect([...QWEN_SH.matchAll(/^export (\w+)=/gm)].map((m) => m[1])).toEqual([
    'OPENAI_BASE_URL',
    'OPENAI_API_KEY',
    'OPENAI_MODEL',
    'QWEN_CODE_MAX_OUTPUT_TOKENS',
    'QWEN_USAGE_STATISTICS_ENABLED',
  ])
  expect(OPENCODE_SH).toMatch(/^opencode$/m)
  expect([...OPENCODE_SH.matchAll(/^export (\w+)=/gm)].map((m) => m[1])).toEqual([
    'SWITCHYARD_API_KEY',
    'OPENCODE_DISABLE_MODELS_FETCH',
    'OPENCODE_DISABLE_AUTOUPDATE',
    'npm_config_offline',
  ])
  const config = JSON.parse(OPENCODE_JSON)
  expect(config.model).toBe('switchyard/demo/agent')
  // The starter config's demo/agent: context_window 200000, max_output_tokens 64000.
  expect(config.provider.switchyard.models['demo/agent'].limit).toEqual({ context: 200_000, output: 64_000 })
})

let gw: TestGateway
let mock: MockUpstream

beforeAll(async () => {
  if (!QWEN && !OPENCODE) return
  const starter = Bun.YAML.parse(
    quotePlaceholders(await Bun.file(new URL('../../../switchyard.example.yaml', import.meta.url)).text()),
  ) as { providers: Array<{ prefix: string }> }
  mock = await startMockUpstream({ chunks: 4 })
  gw = await startGateway({
    doc: {
      server: { host: '127.0.0.1', port: 0 },
      usage: { flush_ms: 20 },
      providers: [
        starter.providers.find((p) => p.prefix === 'demo')!,
        {
          prefix: 'openai',
          kind: 'openai',
          base_url: mock.url,
          api_key: 'sk-mock',
          models: [
            {
              // The mock answers a `text-only` name in text although both agents offer tools.
              name: 'text-only',
              context_window: 200_000,
              max_output_tokens: 8192,
              features: ['streaming', 'tools', 'parallel_tool_calls', 'system_messages'],
            },
          ],
        },
      ],
      plans: PLANS,
      default_plan: 'unlimited',
    },
  })
})
afterAll(async () => {
  await gw?.stop()
  await mock?.stop()
})

async function requestsOf(key: string, model: string): Promise<number> {
  await gw.deps.recorder.flush()
  const res = await fetch(`${gw.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })
  return ((await res.json()) as any).usage.by_model[model]?.requests ?? 0
}

interface Turn {
  agent: 'qwen' | 'opencode'
  model: string
  prompt: string
  /** What stdout shows once the turn is done. */
  answer: RegExp
  /** Run under strace: every connection it opens is to the gateway. */
  trace?: boolean
  /** opencode's `small_model`: its session-title request goes there, and the answer is the title. */
  titleModel?: string
}

const marker = `sy-${process.pid}`
const TURNS: Turn[] = [
  {
    agent: 'qwen',
    model: 'demo/agent',
    prompt: `Run run_shell_command with {"command": "echo ${marker}-q"}`,
    answer: new RegExp(`Tool result received: [\\s\\S]*Output: ${marker}-q`),
    trace: true,
  },
  { agent: 'qwen', model: 'openai/text-only', prompt: 'say hi', answer: /Hello from the mock/ },
  {
    agent: 'opencode',
    model: 'demo/agent',
    // The command waits for `title-stored` (titleStored, below), then prints the marker.
    prompt: `Run bash with {"command": "until [ -e title-stored ]; do sleep 0.1; done; echo ${marker}-o", "description": "Print a marker once the title is stored"}`,
    answer: new RegExp(`Tool result received: ${marker}-o`),
    trace: true,
    titleModel: 'openai/text-only',
  },
]

/** The mock's text answer (`chunks: 4`): what the title request through it comes back with. */
const MOCK_ANSWER = 'Hello from the mock'

/** The title of the one session in opencode's database (opencode 1.18: `~/.local/share/opencode/opencode.db`). */
function sessionTitle(home: string): string {
  const db = new Database(join(home, '.local/share/opencode/opencode.db'), { readonly: true })
  try {
    return db
      .query<{ title: string }, []>('select title from session')
      .all()
      .map((r) => r.title)
      .join('\n')
  } finally {
    db.close()
  }
}

/** opencode's title before the title request has answered (opencode 1.18's `isDefaultTitle`). */
const DEFAULT_TITLE = /^(New session - |Child session - )\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

/**
 * opencode sends its title request beside the turn and does not wait for it (a fiber forked at the
 * turn's first step, ended with the run): on a loaded machine the turn could end first, and no
 * title would be stored. So the turn's command waits for `title-stored` in its working folder,
 * written here once the session has a title other than the default one — or after 60 s, the
 * checks then failing on what is missing; nothing once opencode has exited.
 */
async function titleStored(dirs: { home: string; work: string }, exited: Promise<number>): Promise<void> {
  let ended = false
  void exited.then(() => {
    ended = true
  })
  const until = Date.now() + 60_000
  while (!ended && Date.now() < until) {
    let title = ''
    try {
      title = sessionTitle(dirs.home)
    } catch {
      // No database yet.
    }
    if (title && !DEFAULT_TITLE.test(title)) break
    await Bun.sleep(100)
  }
  if (!ended) await Bun.write(join(dirs.work, 'title-stored'), '')
}

/** One turn, as the page's block has it, with a key of its own. */
async function run(turn: Turn): Promise<AgentRun & { key: string }> {
  const { key } = await gw.key(`agent-${crypto.randomUUID()}`, 'unlimited')
  // The model's limits, read where the page says: GET /v1/models.
  const listed = (await (
    await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })
  ).json()) as {
    data: Array<{ id: string; context_window: number; max_output_tokens: number }>
  }
  const model = listed.data.find((m) => m.id === turn.model)!
  const limit = (id: string) => {
    const m = listed.data.find((l) => l.id === id)!
    return { context: m.context_window, output: m.max_output_tokens }
  }
  if (turn.agent === 'qwen') {
    const block = localise(QWEN_SH, gw.url, key, turn.model).replace(
      /QWEN_CODE_MAX_OUTPUT_TOKENS=\d+/,
      `QWEN_CODE_MAX_OUTPUT_TOKENS=${model.max_output_tokens}`,
    )
    const out = await runAgentBlock({
      block,
      // One-shot: the prompt as its argument; the shell tool allowed (a one-shot run cannot ask).
      args: '"$PROMPT" --allowed-tools run_shell_command',
      prompt: turn.prompt,
      trace: turn.trace,
      // Qwen Code otherwise restarts itself in a second Node with a larger heap once it has loaded
      // (as Gemini CLI, which it forks): a whole second start-up for a limit one turn never nears.
      env: { QWEN_CODE_NO_RELAUNCH: 'true' },
    })
    return { ...out, key }
  }
  const config = JSON.parse(localise(OPENCODE_JSON, gw.url, key))
  config.model = `switchyard/${turn.model}`
  config.provider.switchyard.models = { [turn.model]: { name: turn.model, limit: limit(turn.model) } }
  if (turn.titleModel) {
    config.small_model = `switchyard/${turn.titleModel}`
    config.provider.switchyard.models[turn.titleModel] = {
      name: turn.titleModel,
      limit: limit(turn.titleModel),
    }
  }
  const out = await runAgentBlock({
    block: localise(OPENCODE_SH, gw.url, key),
    // `opencode run` quotes an argument holding spaces; on stdin the prompt arrives as typed.
    args: 'run',
    prompt: turn.prompt,
    stdin: true,
    trace: turn.trace,
    files: { 'opencode.json': JSON.stringify(config, null, 2) },
    readHome: turn.titleModel ? sessionTitle : undefined,
    meanwhile: turn.titleModel ? titleStored : undefined,
  })
  return { ...out, key }
}

describe('Qwen Code and opencode through Switchyard, as docs/agents.md sets them up', () => {
  const turns = TURNS.filter((t) => (t.agent === 'qwen' ? QWEN : OPENCODE))
  test.skipIf(turns.length === 0)(
    'a tool round trip on the demo and a request through an openai upstream, talking only to the gateway',
    async () => {
      const before = mock.stats.requests
      // Concurrently: each run is mostly the agent starting up.
      const runs = await Promise.all(turns.map(run))
      const port = new URL(gw.url).port
      for (const [i, out] of runs.entries()) {
        const turn = turns[i]!
        if (out.code !== 0 || !turn.answer.test(out.stdout))
          console.log(
            `${turn.agent} on ${turn.model} (${turn.prompt}) exited ${out.code}\n${out.stdout}\n${out.stderr.slice(-3000)}`,
          )
      }
      let upstream = 0
      for (const [i, out] of runs.entries()) {
        const turn = turns[i]!
        expect(out.code).toBe(0)
        expect(out.stdout).toMatch(turn.answer)
        // Every request the agent sent was answered and counted (both send side requests too).
        const counted = await requestsOf(out.key, turn.model)
        expect(counted).toBeGreaterThanOrEqual(turn.prompt.startsWith('Run') ? 2 : 1)
        if (turn.model.startsWith('openai/')) upstream += counted
        if (turn.titleModel) {
          // The title request, once, through the upstream; its answer is the session's title.
          expect(await requestsOf(out.key, turn.titleModel)).toBe(1)
          upstream += 1
          expect(out.home).toBe(MOCK_ANSWER)
        }
        if (out.connects) {
          expect(out.connects.length).toBeGreaterThan(0)
          expect(out.connects.filter((a) => a !== `127.0.0.1:${port}`)).toEqual([])
        }
      }
      // Each counted request reached the upstream once.
      expect(mock.stats.requests - before).toBe(upstream)
      if (!Bun.which('strace'))
        console.log('strace is not installed: the gateway-only check of the agents was skipped')
    },
    180_000,
  )
})
