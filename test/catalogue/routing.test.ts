import { describe, expect, test } from 'bun:test'
import { Catalogue, notInPlan, parseModelId, planAllows } from '../../src/catalogue/routing.ts'
import { catalogue, gatewayError, model, PROVIDERS } from '../surfaces/chat/helpers.ts'

describe('parseModelId', () => {
  test('splits at the first slash', () => {
    expect(parseModelId('openai/gpt-4o')).toEqual({ prefix: 'openai', name: 'gpt-4o' })
    expect(parseModelId('openrouter/meta-llama/llama-3')).toEqual({
      prefix: 'openrouter',
      name: 'meta-llama/llama-3',
    })
  })

  test.each([['gpt-4o'], [''], ['/gpt-4o'], ['openai/'], ['/']])('%j is invalid_model', (id) => {
    const error = gatewayError(() => parseModelId(id), { status: 400, code: 'invalid_model', param: 'model' })
    expect(error.message).toContain('<prefix>/<model>')
  })
})

describe('Catalogue', () => {
  test('resolves a model id to its provider and model', () => {
    const entry = catalogue.resolve('openai/gpt-4o-mini')
    expect(entry.id).toBe('openai/gpt-4o-mini')
    expect(entry.provider.prefix).toBe('openai')
    expect(entry.model.name).toBe('gpt-4o-mini')
  })

  test('model names may contain slashes', () => {
    expect(catalogue.resolve('openai/org/nested').model.name).toBe('org/nested')
  })

  test('an id without prefix is 400 invalid_model and suggests the prefixed id', () => {
    const error = gatewayError(() => catalogue.resolve('gpt-4o-mini'), {
      status: 400,
      code: 'invalid_model',
      param: 'model',
    })
    expect(error.message).toContain('"openai/gpt-4o-mini"')
  })

  test('an unknown prefix is 404 model_not_found pointing at GET /v1/models', () => {
    const error = gatewayError(() => catalogue.resolve('nope/gpt-4o'), {
      status: 404,
      code: 'model_not_found',
      param: 'model',
    })
    expect(error.type).toBe('not_found_error')
    expect(error.message).toContain('GET /v1/models')
    expect(error.message).toContain('"nope"')
  })

  test('an unknown model of a known provider is 404 model_not_found', () => {
    const error = gatewayError(() => catalogue.resolve('openai/gpt-5'), {
      status: 404,
      code: 'model_not_found',
    })
    expect(error.message).toContain('GET /v1/models')
  })

  test('ids are case-sensitive', () => {
    gatewayError(() => catalogue.resolve('OpenAI/gpt-4o-mini'), { status: 404, code: 'model_not_found' })
  })

  test.each([
    ['__proto__/x'],
    ['constructor/x'],
    ['demo/__proto__'],
    ['demo/constructor'],
    ['toString/valueOf'],
  ])('prototype names like %j are just unknown models', (id) => {
    gatewayError(() => catalogue.resolve(id), { status: 404, code: 'model_not_found' })
  })

  test('list() gives every model in config order', () => {
    expect(catalogue.list().map((entry) => entry.id)).toEqual([
      'demo/echo',
      'demo/full',
      'demo/cold',
      'openai/gpt-4o-mini',
      'openai/org/nested',
    ])
  })

  test('a duplicate prefix or model is a config error', () => {
    expect(() => new Catalogue([...PROVIDERS, PROVIDERS[0]!])).toThrow('duplicate provider prefix')
    const doubled = { ...PROVIDERS[0]!, models: [model({ name: 'a' }), model({ name: 'a' })] }
    expect(() => new Catalogue([doubled])).toThrow('duplicate model')
  })
})

describe('planAllows', () => {
  const free = model({ name: 'echo', tier: 'free' })
  const untiered = model({ name: 'gpt-4o' })

  test('* admits everything', () => {
    expect(planAllows(['*'], 'openai/gpt-4o', untiered)).toBe(true)
  })

  test('an exact id admits only that id', () => {
    expect(planAllows(['openai/gpt-4o'], 'openai/gpt-4o', untiered)).toBe(true)
    expect(planAllows(['openai/gpt-4o'], 'openai/gpt-4o-mini', untiered)).toBe(false)
  })

  test('prefix/* admits every model of that provider and no other', () => {
    expect(planAllows(['demo/*'], 'demo/echo', free)).toBe(true)
    expect(planAllows(['demo/*'], 'demos/echo', free)).toBe(false)
    expect(planAllows(['demo/*'], 'openai/gpt-4o', untiered)).toBe(false)
  })

  test('tier:NAME admits models of that tier', () => {
    expect(planAllows(['tier:free'], 'demo/echo', free)).toBe(true)
    expect(planAllows(['tier:free'], 'openai/gpt-4o', untiered)).toBe(false)
    expect(planAllows(['tier:pro'], 'demo/echo', free)).toBe(false)
  })

  test('no pattern admits nothing; several patterns admit their union', () => {
    expect(planAllows([], 'demo/echo', free)).toBe(false)
    expect(planAllows(['tier:free', 'openai/gpt-4o'], 'openai/gpt-4o', untiered)).toBe(true)
  })

  test('other wildcards are not globs', () => {
    expect(planAllows(['openai/gpt-*'], 'openai/gpt-4o', untiered)).toBe(false)
  })

  test('notInPlan is 403 model_not_in_plan naming the plan', () => {
    const error = gatewayError(
      () => {
        throw notInPlan('openai/gpt-4o', 'free')
      },
      {
        status: 403,
        code: 'model_not_in_plan',
        param: 'model',
      },
    )
    expect(error.message).toContain('"free"')
  })
})
