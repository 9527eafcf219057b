/**
 * @module
 * `POST /v1/chat/completions`: auth → body → validation, routing, plan, features → limiter →
 * adapter → JSON or SSE → usage record. Only requests that pass every check are admitted and
 * counted against the account's limits.
 */
import { Elysia } from 'elysia'
import { type PreparedChat, prepareChat } from '../../gateway/index.ts'
import { assertPlanAllows } from '../../gateway/routing.ts'
import { abortError, resolveTimeouts } from '../../providers/http.ts'
import type { CallContext } from '../../providers/types.ts'
import { GatewayError } from '../../util/errors.ts'
import { authenticate } from '../auth.ts'
import { checkJsonContentType, readBodyText } from '../body.ts'
import type { Deps } from '../deps.ts'
import { countInvalidRequest } from '../invalid-requests.ts'
import { rateLimitError, rateLimitHeaders } from '../rate-headers.ts'
import { writeChatStream } from '../sse-writer.ts'

const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
}

export function chatRoutes(deps: Deps) {
  const { config, store, clock, recorder, metrics } = deps
  const suspension = config.suspension.enabled
    ? {
        maxRejections: config.suspension.maxRejections,
        windowMs: config.suspension.windowMs,
        durationMs: config.suspension.durationMs,
      }
    : null
  const timeouts = new Map(config.providers.map((p) => [p.prefix, resolveTimeouts(p)]))

  return new Elysia({ name: 'switchyard.chat' }).post(
    '/v1/chat/completions',
    async ({ request, set, server }) => {
      const started = performance.now()
      const auth = await authenticate(deps, request.headers.get('authorization'))
      const plan = auth.plan.plan!
      let chat: PreparedChat
      try {
        checkJsonContentType(request)
        const text = await readBodyText(request, config.server.bodyLimitBytes)
        chat = prepareChat(text, deps.catalogue, (id, model) =>
          assertPlanAllows({ name: auth.plan.name, models: plan.models }, id, model),
        )
      } catch (e) {
        throw await countInvalidRequest(deps, auth, e)
      }

      const now = clock.now()
      const rid = String(set.headers['x-request-id'])
      const admit = await store
        .admit({
          accountId: auth.account.id,
          keyId: auth.key.id,
          model: chat.id,
          requestId: rid,
          stream: chat.stream,
          now,
          rpm: plan.rpm,
          rpd: plan.rpd,
          suspension,
        })
        .catch(storeUnavailable)
      const limitHeaders = rateLimitHeaders(admit, now)
      Object.assign(set.headers, limitHeaders)
      if (!admit.admitted) {
        metrics.limitRejected(admit.window)
        throw rateLimitError(admit, now, limitHeaders)
      }

      // Long upstream waits must not trip Bun's socket idle timeout; our own timeouts apply.
      server?.timeout(request, 0)
      const adapter = deps.adapters.get(chat.provider.prefix)!
      const ctx: CallContext = {
        provider: chat.provider,
        model: chat.model,
        signal: request.signal,
        requestId: rid,
        timeouts: timeouts.get(chat.provider.prefix)!,
      }
      const finish = (
        status: number,
        usage: { prompt_tokens: number; completion_tokens: number } | null,
        err: GatewayError | null,
        ttftMs: number | null,
      ) => {
        metrics.upstreamResult(chat.id, err ? err.code : 'ok')
        recorder.record({
          usageId: admit.usageId,
          status,
          promptTokens: usage?.prompt_tokens ?? null,
          completionTokens: usage?.completion_tokens ?? null,
          latencyMs: Math.round(performance.now() - started),
          ttftMs,
          errorCode: err?.code ?? null,
        })
        if (err && err.status >= 500)
          deps.log.warn('upstream failure', {
            request_id: rid,
            model: chat.id,
            status: err.status,
            code: err.code,
            message: err.message,
          })
      }

      if (!chat.stream) {
        try {
          const res = await adapter.complete(chat.request, ctx)
          res.model = chat.id
          finish(200, res.usage ?? null, null, null)
          return res
        } catch (e) {
          const err = asGatewayError(e)
          finish(err.status, null, err, null)
          throw err
        }
      }

      let stream: Awaited<ReturnType<typeof adapter.stream>>
      try {
        stream = await adapter.stream(chat.request, ctx)
      } catch (e) {
        const err = asGatewayError(e)
        finish(err.status, null, err, null)
        throw err
      }
      metrics.openStreams++
      const out = await writeChatStream(stream, {
        modelId: chat.id,
        includeUsage: chat.includeUsage,
        keepaliveMs: config.server.streamKeepaliveMs,
        holdMs: config.server.streamHoldMs,
        signal: request.signal,
        onFinish: (r) => {
          metrics.openStreams--
          const status = r.error ? r.error.status : r.aborted ? 499 : 200
          finish(status, r.usage, r.error ?? (r.aborted ? abortError(undefined) : null), r.ttftMs)
        },
      })
      if (out.status === 'error') throw out.error
      return new Response(out.body, {
        status: 200,
        headers: { ...(set.headers as Record<string, string>), ...SSE_HEADERS },
      })
    },
    { parse: 'none' },
  )
}

/** The write lock stayed taken past busy_timeout (other processes hammering the file): retry soon. */
function storeUnavailable(e: unknown): never {
  if (/SQLITE_BUSY|database is locked/i.test(String((e as Error)?.message ?? e))) {
    throw new GatewayError(
      503,
      'store_busy',
      'The gateway is overloaded (its database is busy); retry in a second.',
      {
        type: 'api_error',
        headers: { 'retry-after': '1' },
      },
    )
  }
  throw e
}

function asGatewayError(e: unknown): GatewayError {
  if (e instanceof GatewayError) return e
  if ((e as Error)?.name === 'AbortError') return abortError(e)
  return new GatewayError(
    502,
    'upstream_error',
    `Upstream call failed: ${(e as Error)?.message ?? String(e)}`,
  )
}
