/**
 * @module
 * A seeded, reproducible generator of malformed `POST /v1/responses` bodies. Each starts as a valid
 * request (plain string input; a Codex-like conversation with function calls, a namespace and a
 * hosted tool; every option) and gets one to three mutations: a wrong type at a known path, a
 * missing field, null, an unknown item or part type, `__proto__` keys, stored-state fields, huge
 * or deep values, or broken JSON text. Some mutations leave a valid request.
 *
 * @example
 * for (const { body } of generateMalformedResponses(7, 1000, 'demo/echo')) await post(body)
 */
import { mulberry32 } from './malformed-bodies.ts'

export interface MalformedResponsesBody {
  body: string
  /** What was done, for failure reports. */
  mutation: string
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

function bases(model: string): Json[] {
  const fn = {
    type: 'function',
    name: 'exec_command',
    parameters: { type: 'object', properties: { cmd: { type: 'string' } } },
    strict: false,
  }
  return [
    { model, input: 'Hello' },
    {
      model,
      stream: true,
      store: false,
      tool_choice: 'auto',
      parallel_tool_calls: true,
      reasoning: { summary: 'auto' },
      include: ['reasoning.encrypted_content'],
      prompt_cache_key: 'abc',
      input: [
        { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'Be careful.' }] },
        { role: 'user', content: [{ type: 'input_text', text: 'run ls' }] },
        { type: 'reasoning', summary: [], encrypted_content: 'xyz' },
        { type: 'function_call', call_id: 'call_1', name: 'exec_command', arguments: '{"cmd":"ls"}' },
        { type: 'function_call_output', call_id: 'call_1', output: 'a b c' },
      ],
      tools: [
        fn,
        { type: 'namespace', name: 'ns', description: 'd', tools: [{ ...fn, name: 'inner' }] },
        { type: 'web_search' },
      ],
    },
    {
      model,
      instructions: 'Answer in JSON.',
      input: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: [{ type: 'output_text', text: 'Hello' }] },
      ],
      text: { format: { type: 'json_schema', name: 'out', schema: { type: 'object' }, strict: true } },
      temperature: 0.5,
      top_p: 0.9,
      max_output_tokens: 64,
      metadata: { a: 'b' },
      tool_choice: { type: 'function', name: 'exec_command' },
      tools: [fn],
    },
  ]
}

const ODD_VALUES: Json[] = [
  null,
  0,
  -1,
  1e308,
  3.5,
  '',
  'x',
  true,
  [],
  {},
  [null],
  { type: 'nope' },
  'a'.repeat(5000),
]
const TEXT_BREAKS: Array<[string, (s: string) => string]> = [
  ['truncated', (s) => s.slice(0, Math.max(1, Math.floor(s.length / 2)))],
  ['trailing comma', (s) => s.replace(/}$/, ',}')],
  ['NaN', (s) => s.replace(/"model"/, '"n":NaN,"model"')],
  ['comment', (s) => `/* c */${s}`],
  ['not an object', () => '[1,2,3]'],
  ['empty', () => ''],
  ['BOM then garbage', (s) => `\uFEFF${s}}`],
  ['single quotes', (s) => s.replaceAll('"', "'")],
]

export function generateMalformedResponses(
  seed: number,
  count: number,
  model: string,
): MalformedResponsesBody[] {
  const rng = mulberry32(seed)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)]!
  const out: MalformedResponsesBody[] = []
  for (let n = 0; n < count; n++) {
    const body = structuredClone(pick(bases(model))) as { [key: string]: Json }
    const done: string[] = []
    const steps = 1 + Math.floor(rng() * 3)
    let text: string | null = null
    for (let s = 0; s < steps; s++) {
      const paths = allPaths(body)
      const path = pick(paths)
      const kind = Math.floor(rng() * 8)
      if (kind <= 2) {
        // A copy: a shared value mutated by a later step would leak into other bodies (or cycle).
        const value = structuredClone(pick(ODD_VALUES))
        setAt(body, path, value)
        done.push(`set ${path.join('.')}=${JSON.stringify(value).slice(0, 20)}`)
      } else if (kind === 3) {
        deleteAt(body, path)
        done.push(`delete ${path.join('.')}`)
      } else if (kind === 4) {
        const field = pick([
          'previous_response_id',
          'conversation',
          'background',
          '__proto__',
          'constructor',
          'store',
        ])
        body[field] = structuredClone(pick(ODD_VALUES))
        done.push(`add ${field}`)
      } else if (kind === 5) {
        const type = pick([
          'web_search_call',
          'item_reference',
          'computer_call',
          'input_audio',
          'custom',
          'x',
        ])
        setAt(body, [...path, 'type'], type)
        done.push(`type ${path.join('.')}=${type}`)
      } else if (kind === 6) {
        let deep: Json = 'x'
        for (let d = 0; d < 150; d++) deep = [deep]
        setAt(body, path, deep)
        done.push(`deep ${path.join('.')}`)
      } else {
        const [name, fn] = pick(TEXT_BREAKS)
        text = fn(JSON.stringify(body))
        done.push(name)
        break
      }
    }
    out.push({ body: text ?? JSON.stringify(body), mutation: done.join('; ') })
  }
  return out
}

type Path = Array<string | number>

function allPaths(value: Json, prefix: Path = [], out: Path[] = []): Path[] {
  if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const path = [...prefix, Array.isArray(value) ? Number(k) : k]
      out.push(path)
      allPaths(v as Json, path, out)
    }
  }
  return out.length ? out : [['model']]
}

function parentOf(root: Json, path: Path): any {
  let at: any = root
  for (const key of path.slice(0, -1)) {
    if (at === null || typeof at !== 'object') return undefined
    at = at[key]
  }
  return at !== null && typeof at === 'object' ? at : undefined
}

function setAt(root: Json, path: Path, value: Json): void {
  const parent = parentOf(root, path)
  if (parent) parent[path.at(-1)!] = value
}

function deleteAt(root: Json, path: Path): void {
  const parent = parentOf(root, path)
  if (!parent) return
  if (Array.isArray(parent)) parent.splice(Number(path.at(-1)), 1)
  else delete parent[path.at(-1)!]
}
