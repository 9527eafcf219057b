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
