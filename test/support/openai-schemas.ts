/**
 * @module
 * Validators for what the gateway sends back, compiled from OpenAI's published schemas
 * (vendored in `test/fixtures/reference/`). Each returns Ajv's errors, or
 * null when the object is valid.
 *
 * @example
 * expect(validateChunk(chunk)).toBeNull()
 */
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020'

const SCHEMAS_URL = new URL('../fixtures/reference/openai-chat-schemas.json', import.meta.url)
const ID = 'https://switchyard.test/openai-chat-schemas.json'

const document = (await Bun.file(SCHEMAS_URL).json()) as Record<string, unknown>
// `strict: false` for OpenAPI's extra keywords (`discriminator`, `x-stainless-*`); formats off
// because ajv-formats is not installed.
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false })
ajv.addSchema({ ...document, $id: ID })

function compile(name: string): ValidateFunction {
  return ajv.compile({ $ref: `${ID}#/components/schemas/${name}` })
}

const response = compile('CreateChatCompletionResponse')
const chunk = compile('CreateChatCompletionStreamResponse')
const error = compile('ErrorResponse')

function run(validate: ValidateFunction, obj: unknown): ErrorObject[] | null {
  return validate(obj) ? null : (validate.errors ?? [])
}

export const validateResponse = (obj: unknown): ErrorObject[] | null => run(response, obj)
export const validateChunk = (obj: unknown): ErrorObject[] | null => run(chunk, obj)
export const validateError = (obj: unknown): ErrorObject[] | null => run(error, obj)
