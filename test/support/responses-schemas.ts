/**
 * @module
 * Validators for the Responses API objects the gateway sends back, compiled from OpenAI's published
 * schemas (vendored in `test/fixtures/reference/openai-responses-schemas.json`). What the gateway
 * builds itself must meet them as they are but for two fields: a response object's `user` and
 * `usage` may be null, as the live API sends them and as Open Responses' `ResponseResource` (the
 * compliance suite's schema, which requires both keys) allows — OpenAI's spec types them as
 * non-null and optional, so no object could meet both specs without the null. `relaxed` accepts
 * the other documented places where the live API (and so a pass-through) differs (see the fixture
 * README). Requests are checked with every `oneOf` read as `anyOf`, because the spec's request
 * unions overlap.
 *
 * @example
 * expect(validateEvent(event)).toBeNull()
 */
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020'

const SCHEMAS_URL = new URL('../fixtures/reference/openai-responses-schemas.json', import.meta.url)
const ID = 'https://switchyard.test/openai-responses-schemas.json'
const REQUEST_ID = 'https://switchyard.test/openai-responses-request-schemas.json'

const document = withNullableUserAndUsage((await Bun.file(SCHEMAS_URL).json()) as Record<string, any>)
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false })
ajv.addSchema({ ...document, $id: ID })
ajv.addSchema({
  ...(JSON.parse(JSON.stringify(document).replaceAll('"oneOf":', '"anyOf":')) as object),
  $id: REQUEST_ID,
})

/** The spec with a response's `user` and `usage` nullable (see the module comment). */
function withNullableUserAndUsage(doc: Record<string, any>): Record<string, any> {
  const schemas = doc.components.schemas
  const user = schemas.ModelResponseProperties.properties.user
  schemas.ModelResponseProperties.properties.user = { anyOf: [user, { type: 'null' }] }
  const own = schemas.Response.allOf[2].properties
  own.usage = { anyOf: [own.usage, { type: 'null' }] }
  return doc
}

function compile(name: string, doc = ID): ValidateFunction {
  return ajv.compile({ $ref: `${doc}#/components/schemas/${name}` })
}

const response = compile('Response')
const event = compile('ResponseStreamEvent')
const error = compile('ErrorResponse')
const request = compile('CreateResponse', REQUEST_ID)

function run(validate: ValidateFunction, obj: unknown): ErrorObject[] | null {
  return validate(obj) ? null : (validate.errors ?? []).slice(0, 8)
}

export const validateResponseObject = (obj: unknown): ErrorObject[] | null => run(response, obj)
export const validateEvent = (obj: unknown): ErrorObject[] | null => run(event, obj)
export const validateErrorBody = (obj: unknown): ErrorObject[] | null => run(error, obj)
export const validateRequest = (obj: unknown): ErrorObject[] | null => run(request, obj)

/**
 * A copy of an upstream (live API) object with the six documented deviations undone, so that
 * relayed objects can be checked against the spec too.
 */
export function relaxed(obj: unknown): unknown {
  const copy = structuredClone(obj) as Record<string, any>
  const fix = (r: Record<string, any> | undefined) => {
    if (!r) return
    if (r.user === null) delete r.user
    if (r.usage === null) delete r.usage
    const details = r.usage?.input_tokens_details
    if (details && details.cache_write_tokens === undefined) details.cache_write_tokens = 0
    if (r.error?.code === 'insufficient_quota') r.error.code = 'server_error'
  }
  if (copy.object === 'response') fix(copy)
  fix(copy.response)
  if (copy.type === 'response.function_call_arguments.done' && copy.name === undefined) copy.name = 'unknown'
  if (copy.type === 'error' && copy.error) {
    const { code, message, param } = copy.error
    Object.assign(copy, { code, message, param })
    delete copy.error
  }
  return copy
}
