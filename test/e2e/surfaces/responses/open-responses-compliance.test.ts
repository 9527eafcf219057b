/**
 * The Open Responses compliance suite's non-WebSocket checks (openresponses/openresponses,
 * `src/lib/compliance-tests.ts` and its SSE parser, read and written again here, not copied: it is
 * not on npm), run against the gateway on every route of `POST /v1/responses`:
 * - translated: an OpenAI-compatible chat upstream (the mock, which calls offered tools as a model
 *   would), Anthropic and Gemini upstreams (recorded answers), and the offline demo;
 * - pass-through: an OpenAI provider with `wire: responses` replaying recorded Responses streams.
 * Each check sends the suite's request (same shape, same content kinds) and applies its validators:
 * the body (or the stream's terminal response) fits `ResponseResource` (every field it requires,
 * test/support/open-responses-schema.ts), every stream event fits the schema its type names, and
 * the semantic checks (output present, status `completed`, a `function_call` item, the tool-call
 * stream events). Beyond the suite: `sequence_number` counts from 0, `response.created` /
 * `.in_progress` carry `usage` (null), and `POST /v1/responses/compact` (in the same openapi,
 * not yet in the suite's list) answers a `CompactResource`. The demo runs all but the two tool-calling checks: it calls
 * a tool only when the prompt names one (docs/install.md), and the suite's prompt does not.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { compactErrors, eventErrors, responseErrors } from '../../../support/open-responses-schema.ts'
import { type ResponsesBed, startResponsesBed } from '../../../support/responses-bed.ts'

let bed: ResponsesBed
beforeAll(async () => {
  bed = await startResponsesBed()
})
afterAll(() => bed.stop())

type Check = (body: any, events: any[] | null) => string[]

const hasOutput: Check = (body) => (body?.output?.length ? [] : ['the response has no output items'])
const completed: Check = (body) => (body?.status === 'completed' ? [] : [`status is ${body?.status}`])
const hasFunctionCall: Check = (body) =>
  body?.output?.some((i: any) => i.type === 'function_call') ? [] : ['no function_call output item']
const toolCallEvents: Check = (_, events) => {
  const types = (events ?? []).map((e) => e.type)
  const problems: string[] = []
  const withCall = (type: string) => events?.some((e) => e.type === type && e.item?.type === 'function_call')
  if (!withCall('response.output_item.added')) problems.push('no output_item.added with a function_call')
  if (!types.includes('response.function_call_arguments.delta')) problems.push('no arguments delta')
  if (!types.includes('response.function_call_arguments.done')) problems.push('no arguments done')
  if (!withCall('response.output_item.done')) problems.push('no output_item.done with a function_call')
  return problems
}

const WEATHER_TOOL = {
  type: 'function',
  name: 'get_weather',
  description: 'The weather now at a place',
  parameters: {
    type: 'object',
    properties: { location: { type: 'string', description: 'A city and its region, e.g. Lyon, France' } },
    required: ['location'],
  },
}
const user = (content: unknown) => ({ type: 'message', role: 'user', content })
// A 2×2 PNG, inline: no network.
const PNG =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg=='

interface Template {
  id: string
  stream?: boolean
  tools?: boolean
  body: Record<string, unknown>
  checks: Check[]
}

const TEMPLATES: Template[] = [
  {
    id: 'basic-response',
    body: { input: [user('Greet me in three words.')] },
    checks: [hasOutput, completed],
  },
  {
    id: 'streaming-response',
    stream: true,
    body: { input: [user('Count up to five.')] },
    checks: [completed],
  },
  {
    id: 'system-prompt',
    body: {
      input: [
        { type: 'message', role: 'system', content: 'Answer like a ship captain.' },
        user('Say hello.'),
      ],
    },
    checks: [hasOutput, completed],
  },
  {
    id: 'tool-calling',
    tools: true,
    body: { input: [user('How is the weather in Lyon?')], tools: [WEATHER_TOOL] },
    checks: [hasOutput, hasFunctionCall],
  },
  {
    id: 'tool-calling-streaming',
    stream: true,
    tools: true,
    body: { input: [user('How is the weather in Lyon?')], tools: [WEATHER_TOOL] },
    checks: [toolCallEvents],
  },
  {
    id: 'image-input',
    body: {
      input: [
        user([
          { type: 'input_text', text: 'Describe this picture in one sentence.' },
          { type: 'input_image', image_url: PNG },
        ]),
      ],
    },
    checks: [hasOutput, completed],
  },
  {
    id: 'multi-turn',
    body: {
      input: [
        user('Call me Ada.'),
        { type: 'message', role: 'assistant', content: 'Hello Ada, how can I help?' },
        user('What did I ask you to call me?'),
      ],
    },
    checks: [hasOutput, completed],
  },
]

/** Reads an SSE body as the suite's parser does (`event:` / `data:` lines, a blank line ends one). */
async function readEvents(res: Response): Promise<any[]> {
  const events: any[] = []
  for (const frame of (await res.text()).split('\n\n')) {
    const data = frame
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).trim())
      .join('')
    if (data && data !== '[DONE]') events.push(JSON.parse(data))
  }
  return events
}

/** One check of the suite against `model`: the problems found, an empty list when it passes. */
async function run(t: Template, model: string): Promise<string[]> {
  const res = await bed.post({ model, ...t.body, stream: t.stream === true })
  if (res.status !== 200) return [`HTTP ${res.status}: ${await res.text()}`]
  let body: any
  let events: any[] | null = null
  const problems: string[] = []
  if (t.stream) {
    events = await readEvents(res)
    if (events.length === 0) return ['no stream events']
    for (const e of events) problems.push(...eventErrors(e))
    events.forEach((e, i) => {
      if (e.sequence_number !== i) problems.push(`event ${i} has sequence_number ${e.sequence_number}`)
    })
    for (const e of events.slice(0, 2))
      if (!('usage' in (e.response ?? {}))) problems.push(`${e.type}: no usage key`)
    body = events.findLast((e) =>
      ['response.completed', 'response.failed', 'response.incomplete'].includes(e.type),
    )?.response
    if (!body) return [...problems, 'no terminal event']
  } else body = await res.json()
  problems.push(...responseErrors(body))
  for (const check of t.checks) problems.push(...check(body, events))
  return problems
}

/** Each route: the model a check is sent to (the recorded upstreams answer by model name). */
const ROUTES: { route: string; model: (t: Template) => string | null }[] = [
  { route: 'translated, OpenAI-compatible chat upstream', model: () => 'openai/gpt-4o-mini' },
  { route: 'translated, Anthropic upstream', model: (t) => (t.tools ? 'anthropic/tool' : 'anthropic/text') },
  { route: 'translated, Gemini upstream', model: (t) => (t.tools ? 'gemini/tool' : 'gemini/text') },
  { route: 'translated, demo', model: (t) => (t.tools ? null : 'demo/echo') },
  { route: 'pass-through, OpenAI Responses upstream', model: (t) => (t.tools ? 'oair/tool' : 'oair/text') },
]

for (const { route, model } of ROUTES) {
  describe(route, () => {
    for (const t of TEMPLATES) {
      const id = model(t)
      if (id === null) continue
      test(`${t.id} (${id})`, async () => {
        expect(await run(t, id)).toEqual([])
      })
    }
  })
}

describe('POST /v1/responses/compact: a CompactResource on every route', () => {
  for (const { route, model } of ROUTES) {
    const id = model({ id: 'compact', body: {}, checks: [] })
    if (id === null) continue
    test(`${route} (${id})`, async () => {
      const res = await fetch(`${bed.gw.url}/v1/responses/compact`, {
        method: 'POST',
        headers: { authorization: `Bearer ${bed.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: id,
          input: [
            user('Call me Ada.'),
            { type: 'message', role: 'assistant', content: 'Hello Ada, how can I help?' },
            user('Plan a trip to Lyon.'),
          ],
        }),
      })
      expect(res.status).toBe(200)
      expect(compactErrors(await res.json())).toEqual([])
    })
  }
})
