import { expect, test } from 'bun:test'
import Ajv from 'ajv'
import type { ProviderConfig } from '../../../src/config/schema.ts'
import type { ChatRequest, FunctionTool } from '../../../src/operations/chat.ts'
import { createDemoAdapter } from '../../../src/providers/demo/index.ts'
import { callContext } from '../helpers.ts'

const provider: ProviderConfig = {
  prefix: 'demo',
  kind: 'demo',
  models: [{ name: 'echo', context_window: 8192, max_output_tokens: 1024, features: ['tools'] }],
}
const demo = createDemoAdapter(provider)

const WEATHER = {
  type: 'object',
  properties: {
    location: { type: 'string', minLength: 3, maxLength: 40 },
    unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
    days: { type: 'integer', minimum: 1, maximum: 7 },
    when: { type: 'string', format: 'date-time' },
    ratio: { type: 'number', exclusiveMinimum: 0, maximum: 1 },
    tags: { type: 'array', items: { type: 'string' }, minItems: 1 },
    options: {
      type: 'object',
      properties: { verbose: { type: 'boolean' } },
      required: ['verbose'],
      additionalProperties: false,
    },
  },
  required: ['location', 'unit', 'days', 'when', 'ratio', 'tags', 'options'],
  additionalProperties: false,
}
const tools: FunctionTool[] = [{ type: 'function', function: { name: 'get_weather', parameters: WEATHER } }]
const req = (content: string): ChatRequest => ({
  model: 'echo',
  tools,
  messages: [{ role: 'user', content }],
})

async function args(content: string): Promise<unknown> {
  const res = await demo.complete(req(content), callContext(provider))
  return JSON.parse(res.choices[0]!.message.tool_calls![0]!.function.arguments)
}

test('demo tool calls carry arguments built from the tool schema, valid against it and deterministic', async () => {
  const a = await args('get_weather for the coast of Brittany in the coming week please, thanks')
  const validate = new Ajv({ strict: false }).compile(WEATHER)
  expect(validate(a)).toBe(true)
  expect(a).toMatchObject({
    unit: 'celsius',
    days: 1,
    when: '2025-01-01T00:00:00Z',
    options: { verbose: false },
  })
  expect((a as { location: string }).location).toBe('get_weather for the coast of Brittany in')
  expect(await args('get_weather for the coast of Brittany in the coming week please, thanks')).toEqual(a)
})

test('a JSON object in the message is used as the arguments as given', async () => {
  expect(await args('get_weather {"location": "Oslo"}')).toEqual({ location: 'Oslo' })
})

/**
 * opencode's `bash` tool, as zod writes `timeout: z.number().int().positive().optional()`: the
 * safe-integer `minimum` beside `exclusiveMinimum: 0`. The demo took `minimum` alone and sent
 * -9007199254740991, which opencode's own validation refused, so its call failed.
 */
const BASH = {
  type: 'object',
  properties: {
    command: { type: 'string', description: 'The command to execute' },
    timeout: {
      type: 'integer',
      description: 'Optional timeout in milliseconds',
      minimum: -9007199254740991,
      maximum: 9007199254740991,
      exclusiveMinimum: 0,
    },
    description: { type: 'string' },
  },
  required: ['command', 'description'],
  additionalProperties: false,
}

test("opencode's bash tool: timeout honours exclusiveMinimum beside minimum (a positive integer)", async () => {
  const res = await demo.complete(
    {
      model: 'echo',
      tools: [{ type: 'function', function: { name: 'bash', parameters: BASH } }],
      messages: [{ role: 'user', content: 'run bash to list the files' }],
    },
    callContext(provider),
  )
  const a = JSON.parse(res.choices[0]!.message.tool_calls![0]!.function.arguments)
  expect(new Ajv({ strict: false }).compile(BASH)(a)).toBe(true)
  expect(a.timeout).toBe(1)
})

test('numbers meet every bound together, exclusive or not, draft 4 booleans included', async () => {
  const cases: Record<string, unknown>[] = [
    { type: 'number', minimum: -5, exclusiveMinimum: 2 },
    { type: 'integer', minimum: 3, exclusiveMinimum: 0 },
    { type: 'integer', minimum: -10, exclusiveMaximum: -4 },
    { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 0.1 },
    { type: 'integer', maximum: 10, exclusiveMaximum: 6, minimum: 2 },
    { type: 'number', minimum: 1, maximum: 2, exclusiveMaximum: 1.5, exclusiveMinimum: 1.2 },
  ]
  const ajv = new Ajv({ strict: false })
  for (const n of cases) {
    const schema = { type: 'object', properties: { n }, required: ['n'] }
    const res = await demo.complete(
      {
        model: 'echo',
        tools: [{ type: 'function', function: { name: 'measure', parameters: schema } }],
        messages: [{ role: 'user', content: 'measure it' }],
      },
      callContext(provider),
    )
    const a = JSON.parse(res.choices[0]!.message.tool_calls![0]!.function.arguments)
    expect({ schema: n, valid: ajv.compile(schema)(a), a }).toEqual({ schema: n, valid: true, a })
  }
  // Draft 4: a boolean makes the bound beside it exclusive (Ajv 8 reads only draft 6+: checked by hand).
  const d4 = { type: 'integer', minimum: 0, exclusiveMinimum: true, maximum: 3, exclusiveMaximum: true }
  const res = await demo.complete(
    {
      model: 'echo',
      tools: [
        {
          type: 'function',
          function: {
            name: 'measure',
            parameters: { type: 'object', properties: { n: d4 }, required: ['n'] },
          },
        },
      ],
      messages: [{ role: 'user', content: 'measure it' }],
    },
    callContext(provider),
  )
  expect(JSON.parse(res.choices[0]!.message.tool_calls![0]!.function.arguments)).toEqual({ n: 1 })
})
