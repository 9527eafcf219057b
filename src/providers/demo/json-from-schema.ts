/**
 * @module
 * A deterministic value that satisfies a (reasonable) JSON schema, written as JSON text of at most
 * `budget` characters, so the demo model can answer `response_format: json_schema` requests, and
 * call tools, with something the client's validator accepts and within its answer bound. Strings
 * carry the given text (cut to `maxLength`, padded with dots to `minLength`; a fixed sample for
 * `format`s such as date-time, email, uri, uuid); numbers are their minimum (or 0) within their
 * bounds; arrays have `minItems` items; objects have every listed property. `pattern` is not
 * honoured.
 *
 * Two walks over the schema. The first, without the text, writes the smallest such value and
 * counts the strings that carry the text; past the budget it throws `SchemaTooLarge` naming the
 * schema location (and the `minLength` / `minItems` that asked for it). The second writes the value
 * with each of those strings taking an equal share of what the first left, so long text is cut to
 * fit. Every step of a walk writes at least one character and a walk stops once past the budget:
 * its work is bounded by the budget (and the schema's size), never by a number the schema holds.
 *
 * @example
 * jsonFromSchema({ type: 'object', properties: { city: { type: 'string' } } }, 'Oslo', 100).json
 * // '{"city":"Oslo"}'
 */

type Schema = Record<string, unknown>

const MAX_DEPTH = 8

/** The schema's smallest value does not fit the budget. */
export class SchemaTooLarge extends Error {
  constructor(
    /** A JSON pointer into the schema: where the budget ran out. */
    readonly pointer: string,
    /** The keyword that asked for more than was left (`minLength 1000000000`), if one did. */
    readonly keyword: string | null,
  ) {
    super(`schema value too large at ${pointer || '/'}`)
    this.name = 'SchemaTooLarge'
  }
}

export interface SchemaJson {
  json: string
  /** Some string was cut shorter than the text (and its `maxLength`) to fit the budget. */
  cut: boolean
}

/** The smallest value's size and its text-carrying strings, measured once for `fillSchema`. */
export interface SchemaMeasure {
  size: number
  slots: number
}

/** The smallest value of `schema`: its size and how many of its strings carry text. Throws `SchemaTooLarge`. */
export function measureSchema(schema: Schema, budget: number): SchemaMeasure {
  const walk = new Walk(schema, '', budget, 0)
  walk.value(schema, 0)
  return { size: walk.size, slots: walk.slots }
}

/** `schema`'s value with each text-carrying string taking at most `share` characters beyond its smallest form. */
export function fillSchema(schema: Schema, text: string, measure: SchemaMeasure, share: number): SchemaJson {
  const walk = new Walk(schema, text, measure.size + measure.slots * share, share)
  walk.value(schema, 0)
  return { json: walk.parts.join(''), cut: walk.cut }
}

/** `schema`'s value in at most `budget` characters, its strings sharing what the structure leaves. */
export function jsonFromSchema(schema: Schema, text: string, budget: number): SchemaJson {
  const measure = measureSchema(schema, budget)
  const share = measure.slots === 0 ? 0 : Math.floor((budget - measure.size) / measure.slots)
  return fillSchema(schema, text, measure, share)
}

const FORMATS = new Map<string, string>([
  ['date-time', '2025-01-01T00:00:00Z'],
  ['date', '2025-01-01'],
  ['time', '00:00:00Z'],
  ['email', 'demo@example.com'],
  ['uri', 'https://example.com/'],
  ['url', 'https://example.com/'],
  ['uuid', '00000000-0000-4000-8000-000000000000'],
  ['hostname', 'example.com'],
  ['ipv4', '192.0.2.1'],
])

class Walk {
  size = 0
  /** Strings that carry the text. */
  slots = 0
  cut = false
  readonly parts: string[] = []
  /** Where the walk is in the schema (a `$ref` continues from its target's place). */
  private path: Path = null
  private readonly refs = new Map<string, { node: Schema | undefined; path: Path }>()
  private readonly types = new Map<Schema, unknown>()

  constructor(
    private readonly root: Schema,
    private readonly text: string,
    private readonly budget: number,
    /** Characters each text-carrying string may add to its smallest form. */
    private readonly share: number,
  ) {}

  value(schema: unknown, depth: number): void {
    // Clients send anything as a (sub)schema, e.g. `"properties": "x"`: no schema, no constraint.
    if (depth > MAX_DEPTH || schema === null || typeof schema !== 'object' || Array.isArray(schema))
      this.write('null')
    else this.sample(schema as Schema, depth)
  }

  private sample(s: Schema, depth: number): void {
    if ('const' in s) this.write(JSON.stringify(s.const) ?? 'null')
    else if (Array.isArray(s.enum) && s.enum.length > 0) this.write(JSON.stringify(s.enum[0]) ?? 'null')
    else if (typeof s.$ref === 'string') this.ref(s.$ref, depth)
    else {
      const key = (['anyOf', 'oneOf', 'allOf'] as const).find((k) => Array.isArray(s[k]) && s[k].length > 0)
      if (key) this.under([key, '0'], (s[key] as unknown[])[0], depth + 1)
      else this.typed(s, depth)
    }
  }

  private typed(s: Schema, depth: number): void {
    const type = this.typeOf(s)
    if (type === 'object') this.object(s, depth)
    else if (type === 'array') this.array(s, depth)
    else if (type === 'string') this.string(s)
    else if (type === 'number' || type === 'integer')
      this.write(JSON.stringify(sampleNumber(s, type === 'integer')))
    else if (type === 'boolean') this.write('false')
    else if (type === 'null') this.write('null')
    else if (s.properties) this.object(s, depth)
    else this.textString(0, Number.POSITIVE_INFINITY)
  }

  private object(s: Schema, depth: number): void {
    this.write('{')
    const props = s.properties
    if (props !== null && typeof props === 'object' && !Array.isArray(props)) {
      let first = true
      for (const name of Object.keys(props)) {
        this.write(`${first ? '' : ','}${JSON.stringify(name)}:`)
        first = false
        this.under(['properties', name], (props as Schema)[name], depth + 1)
      }
    }
    this.write('}')
  }

  private array(s: Schema, depth: number): void {
    const n = count(s.minItems)
    // Each item is at least one character and a comma: refuse at once rather than count to n.
    if (n > 0 && 2 * n + 1 > this.budget - this.size) throw this.tooLarge(`minItems ${s.minItems}`)
    this.write('[')
    for (let i = 0; i < n; i++) {
      if (i > 0) this.write(',')
      this.under(['items'], s.items ?? {}, depth + 1)
    }
    this.write(']')
  }

  private string(s: Schema): void {
    const fixed = typeof s.format === 'string' ? FORMATS.get(s.format) : undefined
    if (fixed !== undefined) {
      this.write(JSON.stringify(fixed))
      return
    }
    const min = count(s.minLength)
    if (min + 2 > this.budget - this.size) throw this.tooLarge(`minLength ${s.minLength}`)
    const max = typeof s.maxLength === 'number' ? count(s.maxLength) : Number.POSITIVE_INFINITY
    this.textString(min, max)
  }

  /**
   * The longest prefix of the text (at most `max` UTF-16 units, never half a surrogate pair) whose
   * JSON form adds at most `share` characters to the `min` dots it replaces, padded with dots.
   */
  private textString(min: number, max: number): void {
    this.slots++
    const text = this.text
    const limit = Math.min(max, text.length)
    let units = 0
    let extra = 0
    while (units < limit) {
      const [span, width] = escaped(text, units)
      if (units + span > limit) break
      const next = extra + width - (Math.min(units + span, min) - Math.min(units, min))
      if (next > this.share) break
      extra = next
      units += span
    }
    if (units < limit) this.cut = true
    this.write(JSON.stringify(text.slice(0, units) + '.'.repeat(Math.max(0, min - units))))
  }

  private ref(ref: string, depth: number): void {
    let target = this.refs.get(ref)
    if (!target) {
      target = resolveRef(this.root, ref)
      this.refs.set(ref, target)
    }
    if (!target.node) {
      this.write('null')
      return
    }
    const outer = this.path
    this.path = target.path
    this.value(target.node, depth + 1)
    this.path = outer
  }

  private under(keys: [string, string] | [string], schema: unknown, depth: number): void {
    const outer = this.path
    for (const key of keys) this.path = { key, up: this.path }
    this.value(schema, depth)
    this.path = outer
  }

  /** The first non-null `type` (a list may be long; a `$ref`'d schema is visited often). */
  private typeOf(s: Schema): unknown {
    if (!Array.isArray(s.type)) return s.type
    let first = this.types.get(s)
    if (first === undefined) {
      first = s.type.find((t) => t !== 'null') ?? null
      this.types.set(s, first)
    }
    return first
  }

  private write(text: string): void {
    this.size += text.length
    if (this.size > this.budget) throw this.tooLarge(null)
    this.parts.push(text)
  }

  private tooLarge(keyword: string | null): SchemaTooLarge {
    return new SchemaTooLarge(pointer(this.path), keyword)
  }
}

/** A count from a schema keyword: a whole number ≥ 0 (anything else is no constraint). */
function count(n: unknown): number {
  return typeof n === 'number' && n > 0 ? Math.ceil(n) : 0
}

/** The UTF-16 units at `i` that JSON writes together (1, or 2 for a surrogate pair), and how many characters it writes. */
function escaped(text: string, i: number): [span: number, width: number] {
  const c = text.charCodeAt(i)
  if (c === 0x22 || c === 0x5c || c === 0x08 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d)
    return [1, 2]
  if (c < 0x20) return [1, 6]
  if (c >= 0xd800 && c <= 0xdbff) {
    const d = text.charCodeAt(i + 1)
    return d >= 0xdc00 && d <= 0xdfff ? [2, 2] : [1, 6]
  }
  if (c >= 0xdc00 && c <= 0xdfff) return [1, 6]
  return [1, 1]
}

/** Schema keys from the root, innermost first: a step costs one object, shared with the walk's outer steps. */
type Path = { key: string; up: Path } | null

/** Local references only (`#/$defs/X`, `#/definitions/X`): that is what structured outputs allow. */
function resolveRef(root: Schema, ref: string): { node: Schema | undefined; path: Path } {
  if (!ref.startsWith('#')) return { node: undefined, path: null }
  let node: unknown = root
  let path: Path = null
  for (const raw of ref.slice(1).split('/')) {
    if (!raw) continue
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    node = node && typeof node === 'object' ? (node as Schema)[key] : undefined
    path = { key, up: path }
  }
  return { node: node && typeof node === 'object' ? (node as Schema) : undefined, path }
}

function pointer(path: Path): string {
  const keys: string[] = []
  for (let p = path; p; p = p.up) keys.push(`/${p.key.replace(/~/g, '~0').replace(/\//g, '~1')}`)
  return keys.reverse().join('')
}

/**
 * The smallest number the schema allows (0 when it sets no lower bound), kept under its upper one.
 * Every bound applies together: `minimum` and `exclusiveMinimum` both set (zod's `int().positive()`
 * writes the safe-integer floor beside `exclusiveMinimum: 0`, as opencode's `bash` tool declares
 * `timeout`) means the stricter of the two; draft 4's boolean `exclusiveMinimum` /
 * `exclusiveMaximum` makes `minimum` / `maximum` exclusive.
 */
function sampleNumber(schema: Schema, integer: boolean): number {
  const num = (k: string) => (typeof schema[k] === 'number' ? (schema[k] as number) : undefined)
  const lo = tightest(
    [
      [num('minimum'), schema.exclusiveMinimum === true],
      [num('exclusiveMinimum'), true],
    ],
    integer,
    1,
  )
  const hi = tightest(
    [
      [num('maximum'), schema.exclusiveMaximum === true],
      [num('exclusiveMaximum'), true],
    ],
    integer,
    -1,
  )
  let n = lo?.value ?? 0
  if (hi !== undefined && n > hi.value) {
    // Between two bounds closer than the step (numbers only): their midpoint.
    n = !integer && lo !== undefined ? (lo.bound + hi.bound) / 2 : hi.value
  }
  return n
}

/**
 * The strictest of the bounds on one side (`dir` 1: lower, -1: upper): the first number that
 * side allows beside each bound (an exclusive one: one step inside it, a whole integer or 0.5).
 */
function tightest(
  bounds: [number | undefined, boolean][],
  integer: boolean,
  dir: 1 | -1,
): { value: number; bound: number } | undefined {
  let best: { value: number; bound: number } | undefined
  for (const [bound, exclusive] of bounds) {
    if (bound === undefined) continue
    let value: number
    if (integer) {
      const whole = dir === 1 ? Math.ceil(bound) : Math.floor(bound)
      value = exclusive && whole === bound ? whole + dir : whole
    } else value = exclusive ? bound + dir * 0.5 : bound
    if (!best || (dir === 1 ? value > best.value : value < best.value)) best = { value, bound }
  }
  return best
}
