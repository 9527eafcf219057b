/**
 * @module
 * Parsing and validating a chat completion body. The schema is compiled once, at module load:
 * this runs on every request.
 *
 * @example
 * const req = validateChatRequest(parseChatBody(await request.text()))
 */
import type { Static, TSchema } from '@sinclair/typebox'
import { type TypeCheck, TypeCompiler } from '@sinclair/typebox/compiler'
import { GatewayError, pointerToParam } from '../util/errors.ts'
import { type ChatRequestInput, ChatRequestSchema } from './chat-request-schema.ts'
import { deepestPath, exceedsDepth, MAX_JSON_DEPTH } from './json-depth.ts'
import { findJsonSyntaxError, lineAndColumn } from './json-syntax.ts'
import { explainValidationError } from './validation-error.ts'

const checker = TypeCompiler.Compile(ChatRequestSchema)

const BOM = '\uFEFF'
const EXAMPLE = '{"model": "<prefix>/<model>", "messages": [{"role": "user", "content": "Hello"}]}'

/**
 * `JSON.parse` with errors a client can act on: 400 `invalid_json` naming the line and column, and
 * 400 `invalid_type` when the JSON is not an object. A leading byte order mark is ignored (RFC 8259
 * §8.1 allows that). `validateChatRequest` checks the object's shape.
 */
export function parseChatBody(text: string, example: string = EXAMPLE): Record<string, unknown> {
  const json = text.startsWith(BOM) ? text.slice(1) : text
  let body: unknown
  try {
    body = JSON.parse(json)
  } catch (error) {
    throw invalidJson(json, text.length - json.length, error, example)
  }
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

function invalidJson(json: string, skipped: number, error: unknown, example: string): GatewayError {
  if (json.trim() === '') {
    return new GatewayError(
      400,
      'invalid_json',
      `The request body is empty. Send a JSON object such as ${example}.`,
    )
  }
  const problem = findJsonSyntaxError(json)
  let what: string
  if (problem) {
    const { line, column } = lineAndColumn(json, problem.offset)
    what = `${problem.reason} at line ${line}, column ${column} (character ${problem.offset + skipped + 1})`
  } else {
    what = error instanceof Error ? error.message : String(error)
  }
  return new GatewayError(
    400,
    'invalid_json',
    `The request body is not valid JSON: ${what}. Send a JSON object such as ${example}.`,
  )
}

/**
 * Checks a parsed body against the chat request schema and the nesting limit. Returns the body
 * itself, typed (no copy); throws a 400 `GatewayError` whose `param` names the offending field.
 */
export function validateChatRequest(body: unknown): ChatRequestInput {
  return validateWith(checker, body)
}

/** Any surface's schema check plus the nesting limit; the 400 names the offending field. */
export function validateWith<S extends TSchema>(check: TypeCheck<S>, body: unknown): Static<S> {
  if (!check.Check(body)) throw explainValidationError(check.Errors(body), body)
  if (exceedsDepth(body)) throw tooDeep(body)
  return body as Static<S>
}

export function tooDeep(body: unknown): GatewayError {
  const path = deepestPath(body) ?? []
  // The whole path could be a hundred segments long; the first few locate the problem.
  const pointer = path
    .slice(0, 6)
    .map((key) => `/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`)
    .join('')
  return new GatewayError(
    400,
    'invalid_value',
    `The request body nests deeper than ${MAX_JSON_DEPTH} levels (under ${pointerToParam(pointer) ?? 'the top level'}). Flatten that value.`,
    { param: pointerToParam(pointer) },
  )
}
