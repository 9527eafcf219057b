/**
 * @module
 * A seeded, reproducible generator of malformed `POST /v1/chat/completions` bodies for fuzz tests.
 * Each body starts as a valid request (three shapes: minimal, tools conversation, every feature)
 * and gets one to three mutations: wrong types at known paths, missing fields, nulls, arrays for
 * objects and back, `__proto__`/`constructor` keys, unknown roles, tool messages without
 * `tool_call_id`, huge strings and numbers, deep nesting, and broken JSON (truncated, trailing
 * commas, BOM, NaN, comments, ...). Some mutations leave a valid request; fuzz tests accept success
 * or a 4xx error, nothing else.
 *
 * @example
 * for (const { body, contentType } of generateMalformedBodies(42, 2000)) {
 *   await fetch(url, { method: 'POST', body, headers: contentType ? { 'content-type': contentType } : {} })
 * }
 */

export interface MalformedBody {
  body: string
  /** `undefined` means: send no content-type header. */
  contentType?: string
  /** What was done to the body, for failure reports (e.g. `wrong-type messages.0.content`). */
  mutation: string
}

export interface GenerateOptions {
  /** Model id the unmutated bodies use. */
  model?: string
}

/** mulberry32: a tiny, fast PRNG with good enough spread; returns floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
type Path = Array<string | number>

class Gen {
  readonly #rng: () => number
  /** Raw JSON texts that `JSON.stringify` cannot produce (1e999, 10^5-deep arrays), by placeholder. */
  readonly raw: string[] = []
  constructor(seed: number) {
    this.#rng = mulberry32(seed)
  }
  next(): number {
    return this.#rng()
  }
  int(max: number): number {
    return Math.floor(this.#rng() * max)
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!
  }
  chance(p: number): boolean {
    return this.#rng() < p
  }
  /** A placeholder string that `render` swaps for `text`, unquoted. */
  rawValue(text: string): string {
    this.raw.push(text)
    return `@@RAW_${this.raw.length - 1}@@`
  }
}

function baseRequest(g: Gen, model: string): { [key: string]: Json } {
  const shape = g.int(3)
  if (shape === 0) return { model, messages: [{ role: 'user', content: 'Hello' }] }
  const tools: Json = [
    {
      type: 'function',
      function: {
        name: 'get_weather',
        description: 'Weather for a city',
        parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      },
    },
  ]
  if (shape === 1) {
    return {
      model,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_1',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '18C, sunny' },
      ],
      tools,
      tool_choice: 'auto',
      stream: true,
      stream_options: { include_usage: true },
      temperature: 0.7,
      top_p: 0.9,
      max_tokens: 256,
      stop: ['\n\n', 'END'],
      presence_penalty: 0.1,
      frequency_penalty: -0.1,
      seed: 42,
      user: 'user-1',
      logit_bias: { '50256': -100 },
      response_format: { type: 'json_object' },
      metadata: { trace: 'abc' },
    }
  }
  return {
    model,
    messages: [
      { role: 'developer', content: [{ type: 'text', text: 'Answer in JSON.' }] },
      {
        role: 'user',
        name: 'alice',
        content: [
          { type: 'text', text: 'What is in these?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' } },
          { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
          { type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } },
        ],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'A cat.' }], refusal: null },
      { role: 'user', content: 'And?' },
    ],
    tools,
    tool_choice: { type: 'function', function: { name: 'get_weather' } },
    parallel_tool_calls: true,
    response_format: {
      type: 'json_schema',
      json_schema: {
        name: 'answer',
        strict: true,
        schema: { type: 'object', properties: { a: { type: 'string' } } },
      },
    },
    logprobs: true,
    top_logprobs: 5,
    n: 2,
    max_completion_tokens: 100,
  }
}

/** Every path in `value`, root (`[]`) included. */
function pathsOf(value: Json, prefix: Path = [], out: Path[] = []): Path[] {
  out.push(prefix)
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) pathsOf(value[i]!, [...prefix, i], out)
  } else if (value !== null && typeof value === 'object') {
    for (const key of Object.keys(value)) pathsOf(value[key]!, [...prefix, key], out)
  }
  return out
}

function getAt(root: Json, path: Path): Json | undefined {
  let node: Json | undefined = root
  for (const key of path) {
    if (node === null || typeof node !== 'object') return undefined
    node = (node as Record<string | number, Json>)[key]
  }
  return node
}

/** Sets by defining an own property, so `__proto__` becomes a key rather than a prototype. */
function setAt(holder: { root: Json }, path: Path, value: Json): void {
  if (path.length === 0) {
    holder.root = value
    return
  }
  const parent = getAt(holder.root, path.slice(0, -1))
  if (parent === null || typeof parent !== 'object' || parent === undefined) return
  Object.defineProperty(parent, path[path.length - 1]!, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  })
}

function deleteAt(holder: { root: Json }, path: Path): void {
  if (path.length === 0) return
  const parent = getAt(holder.root, path.slice(0, -1))
  const key = path[path.length - 1]!
  if (Array.isArray(parent)) parent.splice(Number(key), 1)
  else if (parent !== null && typeof parent === 'object' && parent !== undefined) delete parent[key]
}

/** Nesting around the gateway's limit (100) and, rarely, far past where `JSON.stringify` overflows. */
function deepText(g: Gen): string {
  const depth = g.pick([50, 99, 100, 101, 101, 1_000, 1_000, 5_000, 5_000, 100_000])
  const kind = depth > 5_000 ? 0 : g.int(3)
  if (kind === 0) return '['.repeat(depth) + ']'.repeat(depth)
  if (kind === 1) return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth)
  return '[{"a":'.repeat(depth) + 'null' + '}]'.repeat(depth)
}

function wrongValue(g: Gen): Json {
  switch (g.int(6)) {
    case 0:
      return g.pick([0, -1, 1.5, 1e308, -1e308, 2 ** 53 + 1, 129, 3, -3, 0.5])
    case 1:
      return g.pick([
        '',
        'x',
        'NaN',
        'Infinity',
        '-1',
        'true',
        'null',
        '1e999',
        '\u0000',
        '__proto__',
        'user',
        '\ud800',
      ])
    case 2:
      return g.pick([true, false, null])
    case 3:
      return g.pick<Json>([[], {}, [null], { '0': 1 }, ['a', 'b', 'c', 'd', 'e'], { role: 'user' }, [[[]]]])
    case 4:
      return g.rawValue(
        g.pick(['1e999', '-1e999', '123456789012345678901234567890', '-0', '1E400', '0.1e-400']),
      )
    default:
      return g.rawValue(deepText(g))
  }
}

function hugeString(g: Gen): string {
  const unit = g.pick(['x', 'é', '😀', '\\', '"', '\n', '\ud800'])
  // Escaped characters grow up to six-fold in JSON, so only plain ones get the largest size.
  const size = g.pick([1_000, 1_000, 10_000, 10_000, 65_536, unit === 'x' ? 200_000 : 65_536])
  return unit.repeat(Math.ceil(size / unit.length))
}

const PROTO_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'valueOf',
  '__defineGetter__',
]
const BAD_ROLES: Json[] = [
  'robot',
  'function',
  'Tool',
  'USER',
  '',
  ' user',
  '__proto__',
  'constructor',
  'toString',
  5,
  null,
  ['user'],
  {},
]
const CONTENT_TYPES = [
  'application/json',
  'application/json',
  'application/json',
  'application/json; charset=utf-8',
  undefined,
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/JSON',
  '',
]

/** One structural mutation of the request tree; returns its label. */
function mutateTree(g: Gen, holder: { root: Json }): string {
  const paths = pathsOf(holder.root)
  const path = g.pick(paths)
  const where = path.join('.') || '(root)'
  const messages = getAt(holder.root, ['messages'])
  const messageCount = Array.isArray(messages) ? messages.length : 0
  switch (g.int(11)) {
    case 0:
      setAt(holder, path, wrongValue(g))
      return `wrong-type ${where}`
    case 1:
      deleteAt(holder, path)
      return `delete ${where}`
    case 2:
      setAt(holder, path, null)
      return `null ${where}`
    case 3: {
      const value = getAt(holder.root, path) ?? null
      const swapped: Json = Array.isArray(value)
        ? Object.fromEntries(value.map((v, i) => [String(i), v]))
        : [value]
      setAt(holder, path, swapped)
      return `array-object-swap ${where}`
    }
    case 4: {
      const objects = paths.filter((p) => {
        const v = getAt(holder.root, p)
        return v !== null && typeof v === 'object' && !Array.isArray(v)
      })
      const target = objects.length ? g.pick(objects) : []
      const key = g.pick(PROTO_KEYS)
      const value = g.pick<Json>([{ model: 'x/y', polluted: true }, 1, 'x', null, [], { role: 'user' }])
      setAt(holder, [...target, key], value)
      return `proto-key ${target.join('.') || '(root)'}.${key}`
    }
    case 5:
      if (!messageCount) return mutateTree(g, holder)
      setAt(holder, ['messages', g.int(messageCount), 'role'], structuredClone(g.pick(BAD_ROLES)))
      return 'unknown-role'
    case 6: {
      const tool: Json = g.pick<Json>([
        { role: 'tool', content: 'result' },
        { role: 'tool', content: 'result', tool_call_id: 5 },
        { role: 'tool', content: 'result', tool_call_id: null },
        { role: 'tool', tool_call_id: 'call_1' },
      ])
      setAt(holder, ['messages', g.int(messageCount + 1)], tool)
      return 'tool-without-tool_call_id'
    }
    case 7: {
      const strings = paths.filter((p) => typeof getAt(holder.root, p) === 'string')
      setAt(holder, strings.length ? g.pick(strings) : ['model'], hugeString(g))
      return 'huge-string'
    }
    case 8: {
      const key = g.pick([
        'temperature',
        'max_tokens',
        'max_completion_tokens',
        'n',
        'seed',
        'top_logprobs',
        'top_p',
      ])
      const text = g.pick([
        '1e999',
        '-1e999',
        '1e308',
        '123456789012345678901234567890',
        '2',
        '2.0000001',
        '-0',
        '4.9e-324',
      ])
      setAt(holder, [key], g.rawValue(text))
      return `huge-number ${key}`
    }
    case 9: {
      const target = g.chance(0.5) ? path : [g.pick(['extra', 'metadata', 'tools'])]
      setAt(holder, target, g.rawValue(deepText(g)))
      return `deep-nesting ${target.join('.') || '(root)'}`
    }
    default: {
      const filler = Array.from({ length: g.pick([0, 0, 100, 100, 1_000, 10_000]) }, () => ({
        role: 'user',
        content: 'hi',
      }))
      setAt(holder, ['messages'], filler)
      return `messages x${filler.length}`
    }
  }
}

function render(g: Gen, root: Json): string {
  let text = JSON.stringify(root) ?? 'null'
  g.raw.forEach((raw, i) => {
    text = text.replace(`"@@RAW_${i}@@"`, () => raw)
  })
  return text
}

/** A broken JSON text made from a valid one. */
function breakJson(g: Gen, text: string): { body: string; mutation: string } {
  const at = g.int(text.length + 1)
  switch (g.int(14)) {
    case 0:
      return { body: text.slice(0, at), mutation: `truncated at ${at}` }
    case 1:
      return { body: text.replace(/([}\]])$/, ',$1').replace(/"}/, '",}'), mutation: 'trailing comma' }
    case 2:
      return { body: `\uFEFF${text}`, mutation: 'BOM' }
    case 3:
      return { body: text.replace(/:(-?\d+(\.\d+)?)/, ':NaN'), mutation: 'NaN' }
    case 4:
      return { body: text.replace(/"/g, "'"), mutation: 'single quotes' }
    case 5:
      return { body: text.slice(0, at) + text.slice(at + 1), mutation: `deleted char ${at}` }
    case 6: {
      const ch = g.pick(['{', '}', '[', ']', ',', ':', '"', '\\', '\u0000', '\u001f', 'x', ' ', '\n'])
      return {
        body: text.slice(0, at) + ch + text.slice(at),
        mutation: `inserted ${JSON.stringify(ch)} at ${at}`,
      }
    }
    case 7:
      return { body: `// comment\n${text}`, mutation: 'comment' }
    case 8:
      return { body: `${text}${g.pick(['}', ']', text, ' x', '\u0000'])}`, mutation: 'trailing garbage' }
    case 9:
      return {
        body: g.pick(['', ' ', '\n\t', 'null', '[]', '"chat"', '123', 'true', '{}', '[{}]']),
        mutation: 'not an object',
      }
    case 10: {
      const length = g.pick([1, 16, 256])
      const chars = Array.from({ length }, () => String.fromCharCode(g.int(0x10000)))
      return { body: chars.join(''), mutation: 'random characters' }
    }
    case 11:
      return { body: text.replace(/"([^"\\]*)"/, '"$1\\x"'), mutation: 'invalid escape' }
    case 12:
      return { body: text.replace(/"([^"\\]*)"/, '"$1\\u12"'), mutation: 'short unicode escape' }
    default:
      return { body: '{'.repeat(g.pick([10, 100_000])), mutation: 'unclosed braces' }
  }
}

/**
 * `count` bodies from `seed`; the same arguments always give the same bodies. Roughly a fifth are
 * broken JSON, the rest well-formed JSON with structural mutations.
 */
export function generateMalformedBodies(
  seed: number,
  count: number,
  options: GenerateOptions = {},
): MalformedBody[] {
  const model = options.model ?? 'demo/echo'
  const out: MalformedBody[] = []
  for (let i = 0; i < count; i++) {
    const g = new Gen((seed ^ Math.imul(i + 1, 0x9e3779b1)) >>> 0)
    const holder: { root: Json } = { root: baseRequest(g, model) }
    const contentType = g.pick(CONTENT_TYPES)
    const mutations: string[] = []
    const rounds = 1 + g.int(3)
    for (let r = 0; r < rounds; r++) mutations.push(mutateTree(g, holder))
    let body = render(g, holder.root)
    if (g.chance(0.2)) {
      const broken = breakJson(g, body)
      body = broken.body
      mutations.push(broken.mutation)
    }
    out.push(
      contentType === undefined
        ? { body, mutation: mutations.join(' + ') }
        : { body, contentType, mutation: mutations.join(' + ') },
    )
  }
  return out
}
