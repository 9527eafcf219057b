/**
 * 1,000 seeded malformed Messages bodies against the real server: every answer is a 2xx or a 4xx
 * in Anthropic's error shape, never a 5xx. Each body starts as a valid request (minimal, a tool
 * conversation, every field) and gets one to three mutations at random paths: wrong types,
 * deleted or null fields, out-of-range numbers, unknown roles and block types, prototype keys,
 * deep nesting and broken JSON. Reproducible: the seed is fixed.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mulberry32 } from '../../../support/malformed-bodies.ts'
import { type MessagesBed, startMessagesBed } from '../../../support/messages-bed.ts'

let bed: MessagesBed

beforeAll(async () => {
  bed = await startMessagesBed()
})
afterAll(async () => {
  await bed.stop()
})

const BASES: Array<Record<string, unknown>> = [
  { model: 'demo/agent', max_tokens: 64, messages: [{ role: 'user', content: 'Hello' }] },
  {
    model: 'demo/agent',
    max_tokens: 256,
    tools: [
      { name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: {} } },
    ],
    tool_choice: { type: 'auto' },
    messages: [
      { role: 'user', content: 'weather?' },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }],
      },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'Sunny', is_error: false }],
      },
    ],
  },
  {
    model: 'demo/agent',
    max_tokens: 32000,
    stream: true,
    system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
    thinking: { type: 'enabled', budget_tokens: 2048 },
    temperature: 0.5,
    top_p: 0.9,
    top_k: 40,
    stop_sequences: ['END'],
    metadata: { user_id: 'u1' },
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'hmm', signature: 'sig' },
          { type: 'text', text: 'ok' },
        ],
      },
      { role: 'user', content: 'go on' },
    ],
  },
]

type Json = unknown
const WRONG: Json[] = [
  null,
  0,
  -1,
  1.5,
  '1e309',
  '',
  'x',
  true,
  [],
  {},
  [1],
  { a: 1 },
  'user',
  'tool_use',
  -0,
]

function paths(value: Json, prefix: Array<string | number> = []): Array<Array<string | number>> {
  const out: Array<Array<string | number>> = [prefix]
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) out.push(...paths(value[i], [...prefix, i]))
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) out.push(...paths(v, [...prefix, k]))
  }
  return out
}

function setAt(root: Record<string, unknown>, path: Array<string | number>, value: Json | undefined): void {
  let node: any = root
  for (const key of path.slice(0, -1)) node = node[key]
  const last = path.at(-1)!
  if (value === undefined) {
    if (Array.isArray(node)) node.splice(Number(last), 1)
    else delete node[last]
  } else {
    // An own property even for `__proto__`, so that it reaches the JSON text.
    Object.defineProperty(node, last, { value, enumerable: true, writable: true, configurable: true })
  }
}

function malformed(rand: () => number): { body: string; mutation: string } {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!
  const doc = structuredClone(pick(BASES))
  const done: string[] = []
  const n = 1 + Math.floor(rand() * 3)
  for (let m = 0; m < n; m++) {
    const all = paths(doc).filter((p) => p.length > 0)
    if (!all.length) break
    const path = pick(all)
    const kind = Math.floor(rand() * 8)
    if (kind <= 2) {
      // A copy: a shared value mutated by a later step would leak into other bodies (or cycle).
      const value = structuredClone(pick(WRONG))
      setAt(doc, path, value)
      done.push(`set ${path.join('.')}=${JSON.stringify(value)}`)
    } else if (kind === 3) {
      setAt(doc, path, undefined)
      done.push(`delete ${path.join('.')}`)
    } else if (kind === 4) {
      const where = pick(['role', 'type'])
      const parent = path.slice(0, -1)
      setAt(
        doc,
        [...parent, where],
        pick(['tool', 'developer', 'function', 'image_url', 'server_tool_use', 'bogus']),
      )
      done.push(`tag ${parent.join('.')}.${where}`)
    } else if (kind === 5) {
      const parent = path.slice(0, -1)
      setAt(doc, [...parent, pick(['__proto__', 'constructor', 'prototype'])], { polluted: true })
      done.push(`proto ${parent.join('.')}`)
    } else if (kind === 6) {
      let deep: Json = 'x'
      for (let d = 0; d < 80; d++) deep = [deep]
      setAt(doc, path, deep)
      done.push(`deep ${path.join('.')}`)
    } else {
      const field = pick(['temperature', 'max_tokens', 'top_p', 'top_k'])
      const value = pick([-1, 2, 1.000001, 0, 1e12, 0.5, '1', null])
      doc[field] = value
      done.push(`range ${field}=${JSON.stringify(value)}`)
    }
  }
  let body = JSON.stringify(doc)
  const breakJson = rand()
  if (breakJson < 0.08) body = body.slice(0, Math.floor(rand() * body.length))
  else if (breakJson < 0.12) body = body.replace('}', ',}')
  else if (breakJson < 0.14) body = body.replace(/\d+/, 'NaN')
  else if (breakJson < 0.15) body = ''
  return { body, mutation: done.join('; ') }
}

test('1,000 seeded malformed Messages bodies → 2xx or 4xx in Anthropic’s shape, never 5xx', async () => {
  const rand = mulberry32(20261123)
  const bodies = Array.from({ length: 1000 }, () => malformed(rand))
  const failures: string[] = []
  let refused = 0
  for (let i = 0; i < bodies.length; i += 25) {
    await Promise.all(
      bodies.slice(i, i + 25).map(async ({ body, mutation }) => {
        const res = await bed.post(body)
        const text = await res.text()
        if (res.status >= 500 || (res.status >= 300 && res.status < 400)) {
          failures.push(`${res.status} ${mutation}: ${text.slice(0, 200)}`)
          return
        }
        if (res.status >= 400) {
          refused++
          const err = JSON.parse(text) as { type?: string; error?: { type?: string; message?: string } }
          if (err.type !== 'error' || typeof err.error?.type !== 'string' || !err.error.message) {
            failures.push(`not Anthropic's shape (${res.status}) ${mutation}: ${text.slice(0, 200)}`)
          }
        }
      }),
    )
  }
  expect(failures).toEqual([])
  // The mutations do break most bodies: the test is not passing on valid requests.
  expect(refused).toBeGreaterThan(600)
}, 120_000)
