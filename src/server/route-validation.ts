/**
 * @module
 * Elysia's validation failures (the body, query or path of the admin API's and the console's
 * routes, checked against their TypeBox schemas by Elysia) as a 400 naming the field. The model
 * surfaces validate their bodies themselves (`json/validation-error.ts` explains those); this is the
 * HTTP shell's, called from the one `onError` (`errors.ts`).
 *
 * @example
 * onError(({ code, error }) => (code === 'VALIDATION' ? routeValidationError(error) : ...))
 */
import { ValueErrorType } from '@sinclair/typebox/errors'
import { extent, type JsonKind, kindOf } from '../json/words.ts'
import { GatewayError, pointerToParam } from '../util/errors.ts'
import { clip } from '../util/text.ts'

/** One of Elysia's validation errors (TypeBox's `ValueError`), as far as the message goes. */
interface FailedCheck {
  type?: number
  path?: string
  schema?: Described
  value?: unknown
}

/** A schema as far as its words go (Elysia's `t.Integer` is a union with its numeric string). */
interface Described {
  type?: string
  minimum?: number
  maximum?: number
  minLength?: number
  maxLength?: number
  const?: unknown
  anyOf?: Described[]
  properties?: Record<string, unknown>
}

/** The longest field name a message repeats: an unknown field's name is whatever was sent. */
const NAME_SHOWN = 64

/**
 * Elysia's validation failure (body, query or path) as a 400 that names the field and says what it
 * takes, and of what was sent only its JSON kind: never the value, which can be an API key or the
 * admin token (`{"key": ["sk-sy-…"]}`). Elysia's own `summary` quotes it (`found: …`), and any
 * value would make the reply as large as the body.
 */
export function routeValidationError(error: unknown): GatewayError {
  // For a missing field Elysia lists "required" first, then the type check that follows from it.
  const first = (error as { all?: FailedCheck[] }).all?.[0]
  const param = clipName(pointerToParam(first?.path ?? ''))
  const field = param ?? 'The request body'
  if (first?.type === ValueErrorType.ObjectRequiredProperty) {
    return new GatewayError(
      400,
      'missing_required_parameter',
      `${field} is required; send ${describe(first.schema)}.`,
      {
        param,
      },
    )
  }
  if (first?.type === ValueErrorType.ObjectAdditionalProperties) {
    const fields = Object.keys(first.schema?.properties ?? {})
    const takes = fields.length ? `it takes ${fields.join(', ')}` : 'it takes none'
    return new GatewayError(400, 'invalid_value', `${field}: not a field of this request; ${takes}.`, {
      param,
    })
  }
  // Nothing parsed from JSON or a query is of another kind; were it, it reads as an object.
  const kind = kindOf(first?.value)
  const got = kind === 'other' ? 'object' : kind
  const expected = describe(first?.schema)
  const code = first && !acceptsKind(first.schema, got) ? 'invalid_type' : 'invalid_value'
  return new GatewayError(
    400,
    code,
    code === 'invalid_type'
      ? `${field}: must be ${expected}; got ${KIND_WORDS[got]}.`
      : `${field}: must be ${expected}.`,
    { param },
  )
}

function clipName(name: string | null): string | null {
  return name === null ? null : clip(name, NAME_SHOWN)
}

/** A value's JSON type in the message's words. */
const KIND_WORDS: Record<Exclude<JsonKind, 'other'>, string> = {
  undefined: 'nothing',
  null: 'null',
  array: 'an array',
  object: 'an object',
  string: 'a string',
  number: 'a number',
  boolean: 'a boolean',
}

/** The JSON types a schema's `type` names (`integer` is a number); any other type takes anything. */
const SCHEMA_KINDS: Record<string, JsonKind> = {
  string: 'string',
  integer: 'number',
  number: 'number',
  boolean: 'boolean',
  object: 'object',
  array: 'array',
  null: 'null',
}

/** Whether a value of `kind` is of the JSON type `schema` takes (so a failure is about the value). */
function acceptsKind(schema: Described | undefined, kind: JsonKind): boolean {
  if (!schema) return true
  if (schema.anyOf) return schema.anyOf.some((s) => acceptsKind(s, kind))
  if (schema.const !== undefined) return kindOf(schema.const) === kind
  const takes = schema.type === undefined ? undefined : SCHEMA_KINDS[schema.type]
  return takes === undefined || takes === kind
}

/** What `schema` takes, in words: "an integer from 1 to 36500", "a string of at most 200 characters". */
function describe(schema: Described | undefined): string {
  const range = numberRange(schema)
  if (range) return range
  if (!schema) return 'a valid value'
  if (schema.const !== undefined) return JSON.stringify(schema.const)
  if (schema.anyOf) return [...new Set(schema.anyOf.map(describe))].join(' or ')
  switch (schema.type) {
    case 'string':
      return `a string${extent(schema.minLength, schema.maxLength, ' characters')}`
    case 'boolean':
      return 'true or false'
    case 'object':
      return 'a JSON object'
    case 'array':
      return 'an array'
    case 'null':
      return 'null'
    default:
      return 'a valid value'
  }
}

/** "an integer from 1 to 36500" for a bounded number's schema, else null. */
function numberRange(schema: Described | undefined): string | null {
  const s = schema?.anyOf?.find((m) => m.type === 'integer' || m.type === 'number') ?? schema
  if (!s || (s.type !== 'integer' && s.type !== 'number')) return null
  const kind = s.type === 'integer' ? 'an integer' : 'a number'
  return `${kind}${extent(s.minimum, s.maximum, '', (min, max) => `from ${min} to ${max}`)}`
}

/**
 * Refuses a path parameter that is no valid percent-encoding (`/admin/v1/accounts/%ZZ`): Elysia's
 * router hands such a parameter to the route as null, which no handler expects (a TypeError, a
 * 500). Called from the hooks of the route groups with parameters (the admin guard's transform,
 * the console's), before any handler runs: 400 `invalid_path` naming the parameter.
 */
export function assertPathParams(
  params: Readonly<Record<string, string | null | undefined>> | undefined,
): void {
  for (const [name, value] of Object.entries(params ?? {})) {
    if (value !== null) continue
    throw new GatewayError(
      400,
      'invalid_path',
      `The path's ${name} is not valid percent-encoding; escape each '%' in it as %25 and other bytes as %XX (two hex digits, whole UTF-8 characters).`,
      { param: name },
    )
  }
}
