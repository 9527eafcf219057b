/** The OpenAI adapter tests' shared bed: a mock upstream per file, provider configs, helpers. */
import { afterAll, beforeAll, expect } from 'bun:test'
import { type MockUpstream, startMockUpstream } from '../../../scripts/mock-upstream.ts'
import type { ProviderConfig } from '../../../src/config/schema.ts'
import type { ChatCompletionChunk, ChatRequest } from '../../../src/operations/chat.ts'
import { createOpenAIAdapter } from '../../../src/providers/openai/index.ts'
import type { Timeouts } from '../../../src/providers/types.ts'
import { GatewayError } from '../../../src/util/errors.ts'
import { beforeEach } from '../../support/hooks.ts'
import { validateChunk, validateError } from '../../support/openai-schemas.ts'
import { callContext, drain, planItems } from '../helpers.ts'

export const API_KEY = 'sk-proj-TESTKEY0123456789abcdefghijklmnop'

export const request = (model = 'gpt-4o-mini', extra: Partial<ChatRequest> = {}): ChatRequest => ({
  model,
  messages: [{ role: 'user', content: 'Hello' }],
  ...extra,
})

export function openAIProvider(baseUrl: string, extra: Partial<ProviderConfig> = {}): ProviderConfig {
  return {
    prefix: 'openai',
    kind: 'openai',
    base_url: baseUrl,
    api_key: API_KEY,
    headers: { 'OpenAI-Organization': 'org-test' },
    models: [
      {
        name: 'gpt-4o-mini',
        context_window: 128_000,
        max_output_tokens: 16_384,
        features: ['streaming', 'tools'],
      },
    ],
    ...extra,
  }
}

type CallOptions = { timeouts?: Partial<Timeouts>; signal?: AbortSignal; provider?: ProviderConfig }

/** Starts a mock for the calling test file (reset before each test) and binds helpers to it. */
export function openAITestbed() {
  let mock: MockUpstream
  beforeAll(async () => {
    mock = await startMockUpstream({ chunks: 4 })
  })
  afterAll(() => mock.stop())
  beforeEach(() => mock.reset())

  const provider = (extra: Partial<ProviderConfig> = {}) => openAIProvider(mock.url, extra)

  function adapterCall(opts: CallOptions = {}) {
    const p = opts.provider ?? provider()
    return { adapter: createOpenAIAdapter(p), ctx: callContext(p, opts) }
  }

  /** Every chunk (each checked against OpenAI's schema) and the error the stream ended with. */
  async function streamOf(model: string, extra: Partial<ChatRequest> = {}, timeouts?: Partial<Timeouts>) {
    const { adapter, ctx } = adapterCall({ timeouts })
    const { items, error } = await drain(planItems(await adapter.stream(request(model, extra), ctx)))
    for (const chunk of items) expect(validateChunk(chunk)).toBeNull()
    return { chunks: items as ChatCompletionChunk[], error }
  }

  return {
    get mock() {
      return mock
    },
    provider,
    adapterCall,
    streamOf,
  }
}

/**
 * A mock of its own for tests that count aborted requests: Bun notices a closed connection a
 * little later, so an abort from the previous test could land in a shared mock's counter.
 */
export async function withOwnMock(
  fn: (own: MockUpstream, p: ProviderConfig) => Promise<void>,
): Promise<void> {
  const own = await startMockUpstream({ chunks: 4 })
  try {
    await fn(own, openAIProvider(own.url))
  } finally {
    await own.stop()
  }
}

/** The error a promise rejects with, checked to be a GatewayError with a valid OpenAI body. */
export async function failure(p: Promise<unknown>): Promise<GatewayError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(GatewayError)
  expect(validateError((err as GatewayError).toBody())).toBeNull()
  return err as GatewayError
}

export async function waitFor(check: () => boolean, ms = 1000): Promise<void> {
  const until = performance.now() + ms
  while (!check() && performance.now() < until) await Bun.sleep(5)
  expect(check()).toBe(true)
}
