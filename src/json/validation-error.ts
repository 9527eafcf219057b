/**
 * @module
 * Turns the first TypeBox validation error into a `GatewayError` that names the field and says
 * what to send instead. Runs only for rejected requests.
 *
 * TypeBox reports a failed union as one error at the union's path. To name the most specific
 * field, the explainer follows the branch the client evidently meant: for unions annotated with
 * `x-discriminator` (messages by `role`, content parts and `response_format` by `type`) the branch
 * with that tag, otherwise the only branch whose JSON type matches the value. So a `tool` message
 * without `tool_call_id` is reported as `messages[3].tool_call_id`, not as "messages[3] matches no
 * message type".
 */
import { Kind, type Static, type TSchema } from '@sinclair/typebox'
import { type TypeCheck, TypeCompiler } from '@sinclair/typebox/compiler'
import { type ValueError, type ValueErrorIterator, ValueErrorType } from '@sinclair/typebox/errors'
import { GatewayError, pointerToParam } from '../util/errors.ts'
import { extent, type JsonKind, kindOf } from './words.ts'

/**
 * A surface's compiled check, compiled at its first call, not when its module loads: compiling
 * the nine request schemas took ~0.1 s of CPU at every `serve` start (docs/benchmarks/suite-cpu.md,
 * stop 60), though a gateway may never see some surfaces; the first request to each pays its own
 * (1–40 ms). docs/decisions.md, "Request schemas compile at first use".
 */
export function compiledOnUse<S extends TSchema>(schema: S): () => TypeCheck<S> {
  let check: TypeCheck<S> | undefined
  return () => {
    check ??= TypeCompiler.Compile(schema)
    return check
  }
}

/**
 * Any surface's schema check: returns the body itself, typed (no copy); throws the explained 400,
 * whose `param` names the offending field. (Nesting is bounded before the body is parsed, by
 * `parseJsonBody`.)
 */
export function validateWith<S extends TSchema>(check: TypeCheck<S>, body: unknown): Static<S> {
  if (!check.Check(body)) throw explainValidationError(check.Errors(body), body)
  return body as Static<S>
}

/** One thing wrong with the body, at a JSON pointer, against the schema that rejected it. */
interface Problem {
  path: string
  schema: TSchema
  value: unknown
  missing: boolean
}

/** Advice for fields clients most often get wrong, keyed by the field's own name. */
const HINTS: Record<string, string> = {
  model: 'Use a model id like "<prefix>/<model>"; GET /v1/models lists them.',
  messages: 'Send a non-empty array such as [{"role": "user", "content": "Hello"}].',
  tool_call_id: 'Set it to the id of the assistant tool call this message answers.',
  arguments: 'Send the arguments as a JSON-encoded string, e.g. "{\\"city\\": \\"Paris\\"}".',
}

/** Unions fail at most a few levels deep in the chat schema; the bound only guards the loop. */
const MAX_UNION_STEPS = 16

/**
 * The 400 for a body that failed the chat schema, given the checker's (lazy) errors.
 * Never throws: if explaining fails, a generic 400 still names the path TypeBox reported.
 */
export function explainValidationError(errors: ValueErrorIterator, body: unknown): GatewayError {
  let first: ValueError | undefined
  try {
    first = errors.First()
    if (first === undefined) throw new Error('no validation error to explain')
    return problemError(narrow(first), body)
  } catch {
    return new GatewayError(
      400,
      'invalid_value',
      'The request body is not a valid chat completion request.',
      {
        param: first ? pointerToParam(first.path) : null,
      },
    )
  }
}

function narrow(error: ValueError): Problem {
  let current = error
  for (let step = 0; step < MAX_UNION_STEPS && current.type === ValueErrorType.Union; step++) {
    const next = pickBranch(current)
    if (next === undefined) break
    if (!('errors' in next)) return next
    current = next
  }
  const missing = current.type === ValueErrorType.ObjectRequiredProperty
  return { path: current.path, schema: current.schema, value: current.value, missing }
}

/** The first error inside the branch the client meant, a problem with the tag itself, or undefined. */
function pickBranch(union: ValueError): ValueError | Problem | undefined {
  const branches: TSchema[] = union.schema.anyOf
  const value = union.value
  const tagKey = union.schema['x-discriminator']
  if (typeof tagKey === 'string' && kindOf(value) === 'object') {
    const tags: TSchema[] = branches.map((branch) => branch.properties[tagKey])
    const path = `${union.path}/${tagKey}`
    const schema = { [Kind]: 'Union', anyOf: tags } as unknown as TSchema
    if (!Object.hasOwn(value as object, tagKey)) return { path, schema, value: undefined, missing: true }
    const tag = (value as Record<string, unknown>)[tagKey]
    const index = tags.findIndex((literal) => literal.const === tag)
    if (index === -1) return { path, schema, value: tag, missing: false }
    return union.errors[index]?.First()
  }
  const kind = kindOf(value)
  const matching = branches.flatMap((branch, index) => (accepts(branch, kind) ? [index] : []))
  return matching.length === 1 ? union.errors[matching[0]!]?.First() : undefined
}

function problemError(problem: Problem, body: unknown): GatewayError {
  const param = pointerToParam(problem.path)
  const field = param ?? 'The request body'
  const name = problem.path.slice(problem.path.lastIndexOf('/') + 1)
  const hint = Object.hasOwn(HINTS, name) ? ` ${HINTS[name]}` : ''
  const role = messageRole(problem.path, body)
  const where = role ? ` in '${role}' messages` : ''
  if (problem.missing) {
    const advice = hint || ` Send ${describe(problem.schema)}.`
    return new GatewayError(400, 'missing_required_parameter', `${field} is required${where}.${advice}`, {
      param,
    })
  }
  const code = accepts(problem.schema, kindOf(problem.value)) ? 'invalid_value' : 'invalid_type'
  const message = `${field} must be ${describe(problem.schema)}${where}; got ${describeValue(problem.value)}.${hint}`
  return new GatewayError(400, code, message, { param })
}

/** The role of the message a problem lies inside (not on its `role` itself), for context. */
function messageRole(path: string, body: unknown): string | undefined {
  const match = /^\/messages\/(\d+)\/(.+)$/.exec(path)
  if (!match || match[2] === 'role') return undefined
  const messages = (body as { messages?: unknown }).messages
  const message = Array.isArray(messages) ? messages[Number(match[1])] : undefined
  const role = kindOf(message) === 'object' ? (message as { role?: unknown }).role : undefined
  return typeof role === 'string' ? role : undefined
}

/** The JSON type each TypeBox kind takes; kinds not listed take anything. */
const KIND_TAKES: Record<string, JsonKind> = {
  String: 'string',
  Number: 'number',
  Integer: 'number',
  Boolean: 'boolean',
  Null: 'null',
  Array: 'array',
  Object: 'object',
  Record: 'object',
}

/** Whether `schema` is of the same JSON type as a value of `kind` (so a mismatch is about the value). */
function accepts(schema: TSchema, kind: JsonKind): boolean {
  if (schema[Kind] === 'Literal') return kindOf(schema.const) === kind
  if (schema[Kind] === 'Union') return (schema.anyOf as TSchema[]).some((branch) => accepts(branch, kind))
  const takes = KIND_TAKES[schema[Kind]]
  return takes === undefined || takes === kind
}

const between = (min: number, max: number) => `between ${min} and ${max}`

/** What `schema` accepts, in words: "a number between 0 and 2", "one of "user" or "tool"". */
function describe(schema: TSchema): string {
  if (typeof schema['x-expected'] === 'string') return schema['x-expected']
  switch (schema[Kind]) {
    case 'String':
      return describeString(schema.minLength, schema.maxLength)
    case 'Number':
      return `a number${extent(schema.minimum, schema.maximum, '', between)}`
    case 'Integer':
      return `an integer${extent(schema.minimum, schema.maximum, '', between)}`
    case 'Boolean':
      return 'a boolean'
    case 'Null':
      return 'null'
    case 'Literal':
      return JSON.stringify(schema.const)
    case 'Array':
      return describeArray(schema.minItems, schema.maxItems)
    case 'Object':
    case 'Record':
      return 'an object'
    case 'Union': {
      const branches: TSchema[] = schema.anyOf
      const words = [...new Set(branches.map(describe))]
      const allLiterals = branches.every((branch) => branch[Kind] === 'Literal')
      return `${allLiterals && words.length > 1 ? 'one of ' : ''}${joinOr(words)}`
    }
    default:
      return 'a valid value'
  }
}

/** A string's length bounds in words: an empty one is a string too, so "a string" alone would not say what is wrong. */
function describeString(min: number | undefined, max: number | undefined): string {
  if (min === 1 && max === undefined) return 'a non-empty string'
  // A minimum of 0 says nothing: every string has at least no characters.
  return `a string${extent(min !== undefined && min > 0 ? min : undefined, max, ' characters')}`
}

function describeArray(min: number | undefined, max: number | undefined): string {
  if (min === 1 && max === undefined) return 'a non-empty array'
  return `an array${extent(min, max, ' items')}`
}

function joinOr(words: string[]): string {
  return words.length <= 1
    ? (words[0] ?? '')
    : `${words.slice(0, -1).join(', ')} or ${words[words.length - 1]}`
}

/** A short, safe rendering of what the client sent: never the whole of a long value. */
function describeValue(value: unknown): string {
  switch (kindOf(value)) {
    case 'undefined':
      return 'nothing'
    case 'string':
      return (value as string).length <= 40
        ? JSON.stringify(value)
        : `a string of ${(value as string).length} characters`
    case 'array':
      return `an array of ${(value as unknown[]).length} items`
    case 'object':
      return 'an object'
    case 'number':
      // `1e400` parses to Infinity: say what was wrong with it, not "Infinity".
      return Number.isFinite(value)
        ? String(value)
        : `a number too ${(value as number) > 0 ? 'large' : 'small'} to read (a JSON number here must lie within ±${Number.MAX_VALUE})`
    case 'boolean':
    case 'null':
      return String(value)
    default:
      return 'a value that is not JSON'
  }
}
