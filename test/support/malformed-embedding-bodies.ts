/**
 * @module
 * A seeded, reproducible generator of malformed `POST /v1/embeddings` bodies for fuzz tests. Each
 * starts as a valid request in one of OpenAI's four input shapes (with or without `dimensions`,
 * `encoding_format`, `user`) and gets one to three mutations: fields removed, wrong types, nulls,
 * empty strings and arrays, bad token ids (negative, fractional, huge, strings), 2049 items, huge
 * `dimensions`, a chat model or an unknown one, `__proto__` keys, deep nesting, and broken JSON
 * (truncated, trailing commas, BOM, comments, NaN). Some mutations leave a valid request; fuzz
 * tests accept success or a 4xx, nothing else.
 *
 * @example
 * for (const { body, mutation } of generateMalformedEmbeddingBodies(7, 1000, ['demo/embed'])) await post(body)
 */
import { mulberry32 } from './malformed-bodies.ts'

export interface MalformedEmbeddingBody {
  body: string
  /** What was done, for failure reports (e.g. `wrong-type input.1`). */
  mutation: string
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

const ODD_VALUES: Json[] = [
  null,
  true,
  0,
  -1,
  1.5,
  2 ** 53,
  1e308,
  '',
  'x',
  'x'.repeat(5000),
  [],
  [''],
  [[]],
  [-1],
  [0.5],
  ['a', 1],
  [[1], 'a'],
  {},
  { text: 'a' },
]

const BROKEN_JSON: Array<(text: string) => string> = [
  (t) => t.slice(0, Math.max(1, Math.floor(t.length / 2))),
  (t) => `${t.slice(0, -1)},}`,
  (t) => `\uFEFF${t}`,
  (t) => `// comment\n${t}`,
  (t) => t.replace(/\d+/, 'NaN'),
  (t) => t.replace(':', '::'),
  (t) => `[${t}]`,
  () => '',
  () => 'null',
  () => `{"model":"demo/embed","input":${'['.repeat(500)}1${']'.repeat(500)}}`,
  () => '{"model":"demo/embed","input":"\\ud800"}',
  () => '{"__proto__":{"model":"demo/embed"},"input":"x"}',
  () => '{"model":"demo/embed","input":"x","constructor":{"prototype":{"polluted":true}}}',
]

/** One more input than OpenAI takes; copied per body (built once: 2049 template strings a body were a fifth of the generator's time). */
const ITEMS_2049: Json[] = Array.from({ length: 2049 }, (_, j) => `item ${j}`)

export function generateMalformedEmbeddingBodies(
  seed: number,
  count: number,
  models: readonly string[],
): MalformedEmbeddingBody[] {
  const rng = mulberry32(seed)
  const int = (n: number) => Math.floor(rng() * n)
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!
  const out: MalformedEmbeddingBody[] = []
  for (let i = 0; i < count; i++) {
    const body = validBody(pick(models), int, pick)
    const steps: string[] = []
    let text: string | undefined
    for (let m = 1 + int(3); m > 0; m--) {
      const kind = int(10)
      const count = pathCount(body)
      if (!count) break
      if (kind === 0) {
        const key = pick(Object.keys(body))
        delete body[key]
        steps.push(`remove ${key}`)
      } else if (kind <= 5) {
        const path = pathAt(body, int(count))
        // A copy: a shared value mutated by a later step would leak into other bodies (or cycle).
        setAt(body, path, structuredClone(pick(ODD_VALUES)))
        steps.push(`wrong-type ${path.join('.')}`)
      } else if (kind === 6) {
        body.input = ITEMS_2049.slice()
        steps.push('2049 inputs')
      } else if (kind === 7) {
        body.dimensions = pick([0, -5, 1e9, 2 ** 31, 3.5, 1_000_000])
        steps.push(`dimensions ${body.dimensions}`)
      } else if (kind === 8) {
        body.model = pick(['demo/echo', 'nope/x', 'demo/nope', 'no-prefix', '', '/', 'demo/'])
        steps.push(`model ${body.model}`)
      } else {
        const broken = pick(BROKEN_JSON)
        text = broken(JSON.stringify(body))
        steps.push('broken json')
        break
      }
    }
    out.push({ body: text ?? JSON.stringify(body), mutation: steps.join(', ') })
  }
  return out
}

function validBody(
  model: string,
  int: (n: number) => number,
  pick: <T>(items: readonly T[]) => T,
): Record<string, Json> {
  const inputs: Json[] = [
    'The food was delicious',
    ['first', 'second', 'third'],
    [101, 202, 303],
    [[1, 2], [3]],
  ]
  const body: Record<string, Json> = { model, input: structuredClone(pick(inputs)) }
  if (int(2)) body.dimensions = 1 + int(16)
  if (int(2)) body.encoding_format = pick(['float', 'base64'])
  if (int(3) === 0) body.user = 'user-1'
  return body
}

type Path = Array<string | number>

/** The children of a node, as [key, value] pairs (none for a scalar). */
function children(value: Json): Array<[string | number, Json]> {
  if (Array.isArray(value)) return value.map((v, i) => [i, v])
  if (value !== null && typeof value === 'object') return Object.entries(value)
  return []
}

/**
 * How many paths lead into `value` (keys and array indexes at every depth, not `value` itself).
 * The generator picks one path of a body uniformly by its index in depth-first order (a node
 * before what it holds), so it needs the count and the one path, not the list: listing every path
 * of a body holding 2049 inputs was most of the time generating a corpus took.
 */
function pathCount(value: Json): number {
  if (value === null || typeof value !== 'object') return 0
  let n = 0
  for (const v of Array.isArray(value) ? value : Object.values(value)) n += 1 + pathCount(v)
  return n
}

/** The path at `index` (0-based, depth-first order) into `value`. */
function pathAt(value: Json, index: number, prefix: Path = []): Path {
  for (const [k, v] of children(value)) {
    if (index === 0) return [...prefix, k]
    const inside = pathCount(v)
    if (index <= inside) return pathAt(v, index - 1, [...prefix, k])
    index -= 1 + inside
  }
  throw new Error(`no path ${index}`)
}

function setAt(root: Record<string, Json>, path: Array<string | number>, value: Json): void {
  let node: any = root
  for (const key of path.slice(0, -1)) node = node[key]
  node[path.at(-1)!] = structuredClone(value)
}
