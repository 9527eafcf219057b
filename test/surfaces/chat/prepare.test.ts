import { describe, expect, test } from 'bun:test'
import { notInPlan, planAllows } from '../../../src/catalogue/routing.ts'
import { catalogue, gatewayError, request } from './helpers.ts'
import { prepareChat } from './prepare.ts'

const body = (fields: Record<string, unknown> = {}) => JSON.stringify(request(fields))
const freePlan = { name: 'free', models: ['tier:free'] }

describe('prepareChat', () => {
  test('a valid body becomes the adapter request', () => {
    const chat = prepareChat(body({ model: 'demo/full', seed: 7, custom_param: 'kept' }), catalogue)
    expect(chat.id).toBe('demo/full')
    expect(chat.provider.prefix).toBe('demo')
    expect(chat.model.name).toBe('full')
    expect(chat.request).toMatchObject({ model: 'full-2025-01-01', seed: 7, custom_param: 'kept' })
    // Issue 22: no temperature or max_tokens default is added (the upstream applies its own).
    expect('temperature' in chat.request || 'max_tokens' in chat.request).toBe(false)
    expect(chat.stream).toBe(false)
    expect(chat.includeUsage).toBe(false)
  })

  test('the upstream name is the catalogue name unless upstream_name is set', () => {
    expect(prepareChat(body({ model: 'openai/gpt-4o-mini' }), catalogue).request.model).toBe('gpt-4o-mini')
  })

  test('stream and includeUsage', () => {
    const streaming = prepareChat(body({ stream: true, stream_options: { include_usage: true } }), catalogue)
    expect(streaming).toMatchObject({ stream: true, includeUsage: true })
    expect(prepareChat(body({ stream: true }), catalogue)).toMatchObject({
      stream: true,
      includeUsage: false,
    })
    expect(prepareChat(body({ stream_options: { include_usage: true } }), catalogue)).toMatchObject({
      stream: false,
      includeUsage: false,
    })
  })

  test('the plan check runs with the resolved id and model; false → 403 model_not_in_plan', () => {
    const seen: string[] = []
    prepareChat(body({ model: 'demo/echo' }), catalogue, (id, model) => {
      seen.push(`${id} ${model.tier}`)
      return true
    })
    expect(seen).toEqual(['demo/echo free'])
    gatewayError(() => prepareChat(body(), catalogue, () => false), {
      status: 403,
      code: 'model_not_in_plan',
      param: 'model',
    })
    expect(() => prepareChat(body(), catalogue, () => undefined)).not.toThrow()
  })

  test('a plan check may throw its own error (notInPlan names the plan)', () => {
    const error = gatewayError(
      () =>
        prepareChat(body(), catalogue, (id, model) => {
          if (!planAllows(freePlan.models, id, model)) throw notInPlan(id, freePlan.name)
        }),
      {
        status: 403,
        code: 'model_not_in_plan',
      },
    )
    expect(error.message).toContain('"free"')
  })

  describe('checks run in DESIGN §5 order', () => {
    const denyAll = () => false

    test('invalid JSON before anything else', () => {
      gatewayError(() => prepareChat('{', catalogue, denyAll), { code: 'invalid_json' })
    })

    test('validation before routing', () => {
      gatewayError(() => prepareChat(body({ model: 'nope/x', temperature: 'hot' }), catalogue, denyAll), {
        code: 'invalid_type',
        param: 'temperature',
      })
    })

    test('routing before the plan', () => {
      gatewayError(() => prepareChat(body({ model: 'gpt-4o' }), catalogue, denyAll), {
        code: 'invalid_model',
      })
      gatewayError(() => prepareChat(body({ model: 'nope/x' }), catalogue, denyAll), {
        status: 404,
        code: 'model_not_found',
      })
    })

    test('the plan before features', () => {
      gatewayError(() => prepareChat(body({ model: 'demo/echo', n: 2 }), catalogue, denyAll), {
        status: 403,
        code: 'model_not_in_plan',
      })
    })

    test('features before token limits', () => {
      gatewayError(() => prepareChat(body({ model: 'demo/echo', n: 2, max_tokens: 10 ** 6 }), catalogue), {
        code: 'unsupported_feature',
        param: 'n',
      })
      gatewayError(() => prepareChat(body({ model: 'demo/echo', max_tokens: 10 ** 6 }), catalogue), {
        code: 'invalid_value',
        param: 'max_tokens',
      })
    })
  })

  test('a tool message without tool_call_id is reported with its index', () => {
    const messages = [
      { role: 'user', content: 'x' },
      {
        role: 'assistant',
        tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'tool', content: 'r' },
    ]
    gatewayError(() => prepareChat(body({ model: 'demo/echo', messages }), catalogue), {
      code: 'missing_required_parameter',
      param: 'messages[2].tool_call_id',
    })
  })
})
