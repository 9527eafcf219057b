/**
 * One upstream server fault, one answer, whatever the provider's wire (DESIGN §10: transient = 5xx,
 * 529 overloaded): each adapter (openai, anthropic, gemini) is called, JSON and streamed, against a
 * real local server on port 0 that answers the status the model name asks for — with no body of
 * its kind (an HTML page from a proxy) or with the provider's own catch-all error body (OpenAI
 * `server_error`, Anthropic `api_error`, Gemini `INTERNAL`), which says nothing more than the status.
 * The client's status and code must be the same at every provider, and the failure kind transient.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { ProviderConfig } from '../../src/config/schema.ts'
import type { ChatRequest } from '../../src/operations/chat.ts'
import { factsOf } from '../../src/providers/failure-facts.ts'
import { createAdapter } from '../../src/providers/index.ts'
import { classify } from '../../src/providers/resilience/index.ts'
import { GatewayError } from '../../src/util/errors.ts'
import { callContext, planItems } from './helpers.ts'

type Kind = 'openai' | 'anthropic' | 'gemini'

/** The provider's catch-all error body for `status`: it names no more than "the server failed". */
const GENERIC_BODY: Record<Kind, (status: number) => unknown> = {
  openai: () => ({
    error: { message: 'The server had an error.', type: 'server_error', param: null, code: null },
  }),
  anthropic: () => ({ type: 'error', error: { type: 'api_error', message: 'Internal server error' } }),
  gemini: (status) => ({
    error: { code: status, message: 'An internal error has occurred.', status: 'INTERNAL' },
  }),
}

/** The provider's "your account is out of quota / credit" body (OpenAI's is a 429, Anthropic's a 402). */
const QUOTA_BODY: Record<Kind, unknown> = {
  openai: {
    error: {
      message: 'You exceeded your current quota, please check your plan and billing details.',
      type: 'insufficient_quota',
      param: null,
      code: 'insufficient_quota',
    },
  },
  anthropic: {
    type: 'error',
    error: { type: 'billing_error', message: 'Your credit balance is too low to access the Anthropic API.' },
  },
  gemini: { error: { code: 402, message: 'Billing is not enabled.', status: 'FAILED_PRECONDITION' } },
}

let server: ReturnType<typeof Bun.serve>
beforeAll(() => {
  // The model name says what to answer: `s503-bare` (an HTML page), `s503-generic` (the wire's own body).
  server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const url = new URL(req.url)
      const kind: Kind = url.pathname.includes('/models/')
        ? 'gemini'
        : url.pathname.endsWith('/messages')
          ? 'anthropic'
          : 'openai'
      const model =
        kind === 'gemini'
          ? decodeURIComponent(/\/models\/([^:]+):/.exec(url.pathname)![1]!)
          : ((await req.json()) as { model: string }).model
      const [, status, shape] = /^s(\d{3})-(bare|generic|quota)$/.exec(model)!
      const code = Number(status)
      if (shape === 'quota')
        return Response.json(QUOTA_BODY[kind], { status: code, headers: { 'retry-after': '20' } })
      return shape === 'bare'
        ? new Response(`<html><body>${code}</body></html>`, {
            status: code,
            headers: { 'content-type': 'text/html' },
          })
        : Response.json(GENERIC_BODY[kind](code), { status: code })
    },
  })
})
afterAll(() => server.stop(true))

function provider(kind: Kind): ProviderConfig {
  const base = `http://127.0.0.1:${server.port}`
  return {
    prefix: kind,
    kind,
    base_url: kind === 'openai' ? `${base}/v1` : base,
    api_key: `key-${kind}-0123456789`,
    models: [{ name: 'm', context_window: 8192, max_output_tokens: 64, features: ['streaming'] }],
  }
}

async function failure(kind: Kind, model: string, stream: boolean): Promise<GatewayError> {
  const p = provider(kind)
  const adapter = createAdapter(p)
  const req: ChatRequest = { model, messages: [{ role: 'user', content: 'Hi' }], max_tokens: 16 }
  try {
    const ctx = callContext(p)
    if (stream) for await (const _ of planItems(await adapter.stream(req, ctx)));
    else await adapter.complete(req, ctx)
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError)
    return err as GatewayError
  }
  throw new Error('expected the call to fail')
}

/** Upstream status → what every provider's client is told. */
const TABLE: Array<[number, number, string]> = [
  [500, 502, 'upstream_error'],
  [502, 502, 'upstream_error'],
  [503, 503, 'upstream_overloaded'],
  [529, 503, 'upstream_overloaded'],
  [504, 504, 'upstream_timeout'],
  [408, 504, 'upstream_timeout'],
]

describe('an upstream server fault maps alike at every provider', () => {
  for (const [upstream, status, code] of TABLE) {
    for (const shape of ['bare', 'generic'] as const) {
      test(`${upstream} (${shape === 'bare' ? 'no error body' : "the wire's catch-all body"}) → ${status} ${code}, transient`, async () => {
        const seen: Record<string, unknown> = {}
        for (const kind of ['openai', 'anthropic', 'gemini'] as const) {
          for (const stream of [false, true]) {
            const err = await failure(kind, `s${upstream}-${shape}`, stream)
            seen[`${kind}${stream ? ' stream' : ''}`] = [err.status, err.code, classify(factsOf(err) ?? {})]
          }
        }
        const want = [status, code, 'transient']
        expect(seen).toEqual({
          openai: want,
          'openai stream': want,
          anthropic: want,
          'anthropic stream': want,
          gemini: want,
          'gemini stream': want,
        })
      })
    }
  }
})

describe("the operator's account out of quota is not a rate limit", () => {
  // A 429 invites the client to wait and retry, and its retry-after says when; neither helps while
  // the gateway's own provider account has no quota or credit. The key rests (credential).
  for (const [kind, upstream] of [
    ['openai', 429],
    ['openai', 402],
    ['anthropic', 402],
  ] as const) {
    test(`${kind} ${upstream} quota → 502 upstream_billing_error, no retry-after, the key rests`, async () => {
      for (const stream of [false, true]) {
        const err = await failure(kind, `s${upstream}-quota`, stream)
        expect([err.status, err.code, err.headers?.['retry-after']]).toEqual([
          502,
          'upstream_billing_error',
          undefined,
        ])
        expect(classify(factsOf(err) ?? {})).toBe('credential')
        expect(err.message).toContain('operator')
      }
    })
  }
})
