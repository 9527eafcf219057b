/**
 * @module
 * Shared fixtures for the gateway tests: models, a catalogue, request bodies and an assertion for
 * the errors the gateway throws.
 */
import { expect } from 'bun:test'
import { Catalogue } from '../../../src/catalogue/routing.ts'
import type { ModelConfig, ProviderConfig } from '../../../src/config/schema.ts'
import { FEATURES, type Feature } from '../../../src/config/schema-providers.ts'
import { GatewayError } from '../../../src/util/errors.ts'

export function model(overrides: Partial<ModelConfig> = {}): ModelConfig {
  return { name: 'm', context_window: 8192, max_output_tokens: 1024, features: [...FEATURES], ...overrides }
}

export function modelWithout(feature: Feature): ModelConfig {
  return model({ features: FEATURES.filter((f) => f !== feature) })
}

export const PROVIDERS: ProviderConfig[] = [
  {
    prefix: 'demo',
    kind: 'demo',
    models: [
      model({ name: 'echo', features: ['streaming', 'tools', 'json_mode', 'system_messages'], tier: 'free' }),
      model({ name: 'full', upstream_name: 'full-2025-01-01', max_output_tokens: 4096 }),
      model({ name: 'cold', temperature: { min: 0, max: 0.5 } }),
    ],
  },
  {
    prefix: 'openai',
    kind: 'openai',
    base_url: 'https://api.openai.com/v1',
    models: [model({ name: 'gpt-4o-mini', max_output_tokens: 16384 }), model({ name: 'org/nested' })],
  },
]

export const catalogue = new Catalogue(PROVIDERS)

export const HELLO = [{ role: 'user', content: 'Hello' }]

/** A valid request body (as an object) with `fields` merged over it; `undefined` removes a field. */
export function request(fields: Record<string, unknown> = {}): Record<string, any> {
  const body: Record<string, unknown> = { model: 'demo/full', messages: HELLO, ...fields }
  for (const key of Object.keys(body)) if (body[key] === undefined) delete body[key]
  return body
}

/** Runs `fn`, expects a `GatewayError` and returns it for further checks. */
export function gatewayError(
  fn: () => unknown,
  expected: { status?: number; code?: string; param?: string | null },
): GatewayError {
  let thrown: unknown
  try {
    fn()
  } catch (error) {
    thrown = error
  }
  expect(thrown).toBeInstanceOf(GatewayError)
  const error = thrown as GatewayError
  expect({ status: error.status, code: error.code, param: error.param }).toMatchObject({
    status: 400,
    ...expected,
  })
  expect(error.message.length).toBeGreaterThan(10)
  return error
}
