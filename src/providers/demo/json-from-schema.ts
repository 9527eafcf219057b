/**
 * @module
 * A deterministic value that satisfies a (reasonable) JSON schema, so the demo model can answer
 * `response_format: json_schema` requests with something the client's parser accepts. Strings
 * carry the demo's answer text; numbers are their minimum or 0; arrays have `minItems` items.
 */

type Schema = Record<string, unknown>

const MAX_DEPTH = 8

export function valueFromSchema(schema: Schema, text: string): unknown {
  return sample(schema, schema, text, 0)
}

function sample(schema: Schema, root: Schema, text: string, depth: number): unknown {
  if (depth > MAX_DEPTH) return null
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
      return text
    case 'number':
    case 'integer':
      return typeof schema.minimum === 'number' ? schema.minimum : 0
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
