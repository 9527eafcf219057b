/**
 * @module
 * `JSON.parse` for request bodies, with errors a client can act on and a cost bounded by the
 * body's size whatever it holds: the structural limits (`json-limits.ts`) run first, in one linear
 * pass; only a body within them is parsed, and only a body `JSON.parse` refused is handed to the
 * syntax-error finder, whose stack the limits bound. Every surface parses its body here
 * (`parseJsonObject`), and the admin API and the console theirs (`parseJsonBody`).
 *
 * @example
 * const body = parseJsonObject(await request.text(), '{"model": "a/b", "messages": []}')
 */
import { GatewayError, pointerToParam } from '../util/errors.ts'
import { checkJsonStructure, DEFAULT_JSON_LIMITS, type JsonLimits, type StructureProblem } from './limits.ts'
import { parseSharingStrings, SHARED_MIN } from './shared-strings.ts'
import { findJsonSyntaxError, lineAndColumn } from './syntax.ts'

const BOM = '\uFEFF'

/**
 * The parsed value of `text`. A leading byte order mark is ignored (RFC 8259 §8.1 allows it).
 * Throws 400 `invalid_json` naming the line and column of the first syntax error, or 400
 * `invalid_value` when the body nests too deep or holds too many elements. `example` is a body
 * the messages suggest instead. `limitsChecked`: the caller already held `text` to `limits`
 * (the body reader does, while reading), so the structural pass is not run a second time.
 * `sharedMin`: the shortest string kept as a view of the text (`parseSharingStrings`).
 */
export function parseJsonBody(
  text: string,
  example: string,
  limits: JsonLimits = DEFAULT_JSON_LIMITS,
  limitsChecked = false,
  sharedMin = SHARED_MIN,
): unknown {
  if (!limitsChecked) {
    const limitError = jsonLimitError(text, limits)
    if (limitError) throw limitError
  }
  const json = text.startsWith(BOM) ? text.slice(1) : text
  const skipped = text.length - json.length
  try {
    // Long strings as views of the text, not copies (shared-strings.ts): a body costs its size once.
    return parseSharingStrings(json, sharedMin)
  } catch (error) {
    throw invalidJson(json, skipped, error, example, limits)
  }
}

/**
 * The body as a JSON object: `parseJsonBody`'s checks (syntax with line and column, nesting and
 * size limits), then 400 `invalid_type` when the JSON is not an object. The surface's schema
 * (`validateWith`) checks the object's shape. `example` is the surface's own body, quoted in the
 * messages. `limitsChecked`: `text` came from the body reader, which already held it to the
 * structural limits. `limits`: the surface's own (embeddings' larger arrays), where it has any;
 * `sharedMin` likewise (embeddings' many short inputs).
 */
export function parseJsonObject(
  text: string,
  example: string,
  limitsChecked = false,
  limits?: JsonLimits,
  sharedMin?: number,
): Record<string, unknown> {
  const body = parseJsonBody(text, example, limits, limitsChecked, sharedMin)
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    const got = body === null ? 'null' : Array.isArray(body) ? 'an array' : `a ${typeof body}`
    throw new GatewayError(
      400,
      'invalid_type',
      `The request body must be a JSON object, not ${got}. Send ${example}.`,
    )
  }
  return body as Record<string, unknown>
}

/**
 * The 400 for a text that breaks a structural limit (naming where, and for depth the path), or
 * null. `parseJsonBody` runs it first; the body reader runs it on what it has read so far when its
 * scanner stops early, so both give the same answer.
 */
export function jsonLimitError(text: string, limits: JsonLimits = DEFAULT_JSON_LIMITS): GatewayError | null {
  const json = text.startsWith(BOM) ? text.slice(1) : text
  const problem = checkJsonStructure(json, limits)
  return problem ? structureError(json, text.length - json.length, problem, limits) : null
}

function structureError(
  json: string,
  skipped: number,
  problem: StructureProblem,
  limits: JsonLimits,
): GatewayError {
  const where = position(json, problem.offset, skipped)
  if (problem.kind === 'elements') {
    const besides = limits.maxArrayScalars === undefined ? '' : ' besides numbers in arrays'
    return new GatewayError(
      400,
      'invalid_value',
      `The request body holds more than ${limits.maxElements} array items and object members${besides} (the limit is passed ${where}). Send a smaller request.`,
    )
  }
  if (problem.kind === 'scalars') {
    return new GatewayError(
      400,
      'invalid_value',
      `The request body holds more than ${limits.maxArrayScalars} numbers in arrays (the limit is passed ${where}). Send a smaller request.`,
    )
  }
  // The path can be a hundred segments long; the first few locate the problem.
  const pointer = problem.path
    .slice(0, 6)
    .map((key) => `/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`)
    .join('')
  const param = pointerToParam(pointer)
  return new GatewayError(
    400,
    'invalid_value',
    `The request body nests deeper than ${limits.maxDepth} levels (under ${param ?? 'the top level'}, ${where}). Flatten that value.`,
    { param },
  )
}

function invalidJson(
  json: string,
  skipped: number,
  error: unknown,
  example: string,
  limits: JsonLimits,
): GatewayError {
  if (json.trim() === '') {
    return new GatewayError(
      400,
      'invalid_json',
      `The request body is empty. Send a JSON object such as ${example}.`,
    )
  }
  const problem = findJsonSyntaxError(json, limits.maxDepth)
  const what = problem
    ? `${problem.reason} ${position(json, problem.offset, skipped)}`
    : error instanceof Error
      ? error.message
      : String(error)
  return new GatewayError(
    400,
    'invalid_json',
    `The request body is not valid JSON: ${what}. Send a JSON object such as ${example}.`,
  )
}

function position(json: string, offset: number, skipped: number): string {
  const { line, column } = lineAndColumn(json, offset)
  return `at line ${line}, column ${column} (character ${offset + skipped + 1})`
}
