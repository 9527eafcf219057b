/**
 * The bed of the tokens-and-money tests (DESIGN §11): a billing upstream (billing-upstream.ts),
 * a gateway in front of it whose `bill/m` model has a 4,096-token maximum output, and requests on
 * all three surfaces, streamed or not, each asking for a given output cap (or none).
 */
import type { BackendUrls } from './backends.ts'
import { type BillingUpstream, startBillingUpstream } from './billing-upstream.ts'

type UpstreamOptions = NonNullable<Parameters<typeof startBillingUpstream>[0]>

import { ADMIN_TOKEN, DEMO_PROVIDER, startGateway, type TestGateway } from './gateway.ts'

export type SurfaceName = 'chat' | 'messages' | 'responses'
export const SURFACES: SurfaceName[] = ['chat', 'messages', 'responses']

export function tokensDoc(
  upstreamUrl: string,
  plans: Record<string, unknown>,
  pricing?: Record<string, number>,
  /** The billing provider's model (`bill/<model>`): `m`, or an OpenAI name its tokenizer family goes by. */
  model = 'm',
): Record<string, unknown> {
  return {
    server: { host: '127.0.0.1', port: 0 },
    admin: { token: ADMIN_TOKEN },
    providers: [
      DEMO_PROVIDER,
      {
        prefix: 'bill',
        kind: 'openai',
        base_url: upstreamUrl,
        api_key: 'sk-upstream',
        models: [
          {
            name: model,
            context_window: 128_000,
            max_output_tokens: 4096,
            features: ['streaming', 'system_messages', 'n', 'vision'],
            ...(pricing ? { pricing } : {}),
          },
        ],
      },
    ],
    plans: { free: { rpm: null, rpd: null, models: ['*'] }, ...plans },
    default_plan: 'free',
  }
}

/**
 * The path and body of a request of about 20 words on `surface`; `max`: the output cap asked for
 * (null: none); `model`: `bill/m` unless a test's config adds another.
 */
export function tokensBody(
  surface: SurfaceName,
  stream: boolean,
  max: number | null,
  model = 'bill/m',
): [path: string, body: Record<string, unknown>] {
  const text = 'please count these words for the billing upstream which bills one token for each word it sees'
  const cap = (name: string) => (max === null ? {} : { [name]: max })
  return surface === 'chat'
    ? [
        '/v1/chat/completions',
        {
          model,
          messages: [{ role: 'user', content: text }],
          stream,
          ...cap('max_completion_tokens'),
        },
      ]
    : surface === 'messages'
      ? [
          '/v1/messages',
          { model, messages: [{ role: 'user', content: text }], stream, max_tokens: max ?? 4096 },
        ]
      : ['/v1/responses', { model, input: text, stream, ...cap('max_output_tokens') }]
}

/** The request of `tokensBody`, sent. */
export function tokensRequest(
  url: string,
  key: string,
  surface: SurfaceName,
  stream: boolean,
  max: number | null,
  model = 'bill/m',
): Promise<Response> {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
  const [path, body] = tokensBody(surface, stream, max, model)
  return fetch(`${url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) })
}

export interface TokensBed {
  upstream: BillingUpstream
  gw: TestGateway
  stop(): Promise<void>
}

export async function startTokensBed(
  plans: Record<string, unknown>,
  opts: {
    pricing?: Record<string, number>
    answerTokens?: number
    backend?: BackendUrls
    /** More of the upstream's behaviour: a cap it ignores, no usage, a pace. */
    upstream?: UpstreamOptions
    /** The billing provider's model name (tokensDoc). */
    model?: string
  } = {},
): Promise<TokensBed> {
  const upstream = await startBillingUpstream({ answerTokens: opts.answerTokens, ...opts.upstream })
  const gw = await startGateway({
    doc: tokensDoc(upstream.url, plans, opts.pricing, opts.model),
    backend: opts.backend,
  })
  return {
    upstream,
    gw,
    async stop() {
      await gw.stop()
      await upstream.stop()
    },
  }
}
