/**
 * The local OpenAI embeddings server refuses what OpenAI refuses (so pass-through tests mean
 * something), and its refusals reach the client through the pass-through as OpenAI errors.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { type FakeUpstream, startFakeOpenAIEmbeddings } from '../../support/fake-openai-embeddings.ts'
import { DEMO_PROVIDER, startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'

let fake: FakeUpstream<'embeddings'>
let gw: TestGateway
let key: string
beforeAll(async () => {
  fake = startFakeOpenAIEmbeddings({ apiKey: 'sk-up' })
  gw = await startGateway({
    doc: testConfigDoc({
      providers: [
        DEMO_PROVIDER,
        {
          prefix: 'oai',
          kind: 'openai',
          base_url: `${fake.url}/v1`,
          api_key: 'sk-up',
          models: [
            {
              name: 'small',
              upstream_name: 'text-embedding-3-small',
              type: 'embedding',
              context_window: 8192,
            },
            { name: 'ada', upstream_name: 'text-embedding-ada-002', type: 'embedding', context_window: 8192 },
            { name: 'gone', upstream_name: 'text-embedding-9', type: 'embedding', context_window: 8192 },
          ],
        },
      ],
    }),
  })
  key = (await gw.key('wire', 'unlimited')).key
})
afterAll(async () => {
  await gw.stop()
  await fake.stop()
})

const direct = (apiKey = 'sk-up') => new OpenAI({ apiKey, baseURL: `${fake.url}/v1`, maxRetries: 0 })

describe('the local OpenAI embeddings server', () => {
  test('answers the SDK like OpenAI: base64 by default (decoded), float on request, usage in cl100k tokens', async () => {
    const b64 = await direct().embeddings.create({ model: 'text-embedding-3-small', input: 'hello world' })
    expect(fake.lastRequest()!.body.encoding_format).toBe('base64')
    expect(b64.data[0]!.embedding).toHaveLength(1536)
    expect(b64.usage).toEqual({ prompt_tokens: 2, total_tokens: 2 })
    const float = await direct().embeddings.create({
      model: 'text-embedding-3-small',
      input: 'hello world',
      encoding_format: 'float',
    })
    expect(float.data[0]!.embedding).toEqual(b64.data[0]!.embedding)
  })

  test('refuses what OpenAI refuses', async () => {
    const refused = async (body: any, apiKey?: string) =>
      direct(apiKey)
        .embeddings.create(body)
        .catch((e) => e)
    expect((await refused({ model: 'text-embedding-3-small', input: 'x', extra: 1 })).message).toContain(
      'Unrecognized request argument supplied: extra',
    )
    expect((await refused({ model: 'text-embedding-3-small', input: '' })).status).toBe(400)
    expect((await refused({ model: 'text-embedding-3-small', input: [] })).status).toBe(400)
    expect((await refused({ model: 'text-embedding-3-small', input: ['a', 1] })).status).toBe(400)
    expect((await refused({ model: 'text-embedding-ada-002', input: 'x', dimensions: 8 })).status).toBe(400)
    expect((await refused({ model: 'text-embedding-3-small', input: 'x', dimensions: 1537 })).status).toBe(
      400,
    )
    expect(
      (await refused({ model: 'text-embedding-3-small', input: 'x', encoding_format: 'int8' })).status,
    ).toBe(400)
    expect((await refused({ model: 'nope', input: 'x' })).status).toBe(404)
    expect((await refused({ model: 'text-embedding-3-small', input: 'x' }, 'sk-wrong')).status).toBe(401)
  })
})

describe("the upstream's refusals through the pass-through", () => {
  const client = () => new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 })
  const refused = async (body: any) =>
    client()
      .embeddings.create(body)
      .catch((e) => e)

  test('a client error the upstream finds keeps its 400; the gateway never names the upstream key', async () => {
    const extra = await refused({ model: 'oai/small', input: 'x', vendor_option: true })
    expect(extra.status).toBe(400)
    expect(extra.message).toContain('Unrecognized request argument supplied: vendor_option')
    const ada = await refused({ model: 'oai/ada', input: 'x', dimensions: 8 })
    expect(ada.status).toBe(400)
    expect(ada.message).toContain('does not support specifying dimensions')
    for (const err of [extra, ada]) expect(err.message).not.toContain('sk-up')
  })

  test('an upstream 404 (it has no such model) keeps its status and names the model', async () => {
    const gone = await refused({ model: 'oai/gone', input: 'x' })
    expect(gone.status).toBe(404)
    expect(gone.message).toContain('text-embedding-9')
  })
})
