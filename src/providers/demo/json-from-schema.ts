/**
 * @module
 * A deterministic value that satisfies a (reasonable) JSON schema, so the demo model can answer
 * `response_format: json_schema` requests, and call tools, with something the client's validator
 * accepts. Strings carry the given text (cut or padded to `maxLength` / `minLength`; a fixed
 * sample for `format`s such as date-time, email, uri, uuid); numbers are their minimum (or 0)
 * within their bounds; arrays have `minItems` items; objects have every listed property.
 * `pattern` is not honoured.
 */

type Schema = Record<string, unknown>

const MAX_DEPTH = 8

export function valueFromSchema(schema: Schema, text: string): unknown {
  return sample(schema, schema, text, 0)
}

function sample(schema: Schema, root: Schema, text: string, depth: number): unknown {
  if (depth > MAX_DEPTH) return null
  // Clients send anything as a (sub)schema, e.g. `"properties": "x"`: no schema, no constraint.
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return null
  if ('const' in schema) return schema.const
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0]
  if (typeof schema.$ref === 'string') {
    const target = resolveRef(root, schema.$ref)
    return target ? sample(target, root, text, depth + 1) : null
  }
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const options = schema[key]
    if (Array.isArray(options) && options.length > 0)
      return sample(options[0] as Schema, root, text, depth + 1)
  }
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {}
      const props = (schema.properties ?? {}) as Record<string, Schema>
      for (const [name, sub] of Object.entries(props)) out[name] = sample(sub, root, text, depth + 1)
      return out
    }
    case 'array': {
      const n = typeof schema.minItems === 'number' ? schema.minItems : 0
      const items = (schema.items ?? {}) as Schema
      return Array.from({ length: n }, () => sample(items, root, text, depth + 1))
    }
    case 'string':
      return sampleString(schema, text)
    case 'number':
    case 'integer':
      return sampleNumber(schema, type === 'integer')
    case 'boolean':
      return false
    case 'null':
      return null
    default:
      return schema.properties ? sample({ ...schema, type: 'object' }, root, text, depth) : text
  }
}

/** Local references only (`#/$defs/X`, `#/definitions/X`): that is what structured outputs allow. */
function resolveRef(root: Schema, ref: string): Schema | undefined {
  if (!ref.startsWith('#')) return undefined
  let node: unknown = root
  for (const raw of ref.slice(1).split('/').filter(Boolean)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    node = node && typeof node === 'object' ? (node as Schema)[key] : undefined
  }
  return node && typeof node === 'object' ? (node as Schema) : undefined
}

const FORMATS: Record<string, string> = {
  'date-time': '2025-01-01T00:00:00Z',
  date: '2025-01-01',
  time: '00:00:00Z',
  email: 'demo@example.com',
  uri: 'https://example.com/',
  url: 'https://example.com/',
  uuid: '00000000-0000-4000-8000-000000000000',
  hostname: 'example.com',
  ipv4: '192.0.2.1',
}

function sampleString(schema: Schema, text: string): string {
  const fixed = typeof schema.format === 'string' ? FORMATS[schema.format] : undefined
  if (fixed !== undefined) return fixed
  let s = text
  if (typeof schema.maxLength === 'number') s = s.slice(0, schema.maxLength)
  if (typeof schema.minLength === 'number' && s.length < schema.minLength) s = s.padEnd(schema.minLength, '.')
  return s
}

function sampleNumber(schema: Schema, integer: boolean): number {
  const num = (k: string) => (typeof schema[k] === 'number' ? (schema[k] as number) : undefined)
  const exMin = num('exclusiveMinimum')
  const exMax = num('exclusiveMaximum')
  let n = num('minimum') ?? (exMin !== undefined ? exMin + (integer ? 1 : 0.5) : 0)
  const max = num('maximum') ?? (exMax !== undefined ? exMax - (integer ? 1 : 0.5) : undefined)
  if (max !== undefined && n > max) n = max
  return integer ? Math.ceil(n) : n
}
