/**
 * @module
 * OpenTelemetry traces (DESIGN §15), written here rather than with the OpenTelemetry JS SDK (the
 * README says why): a SERVER span per request, continuing the client's `traceparent`, and a
 * CLIENT span per upstream attempt, whose context is the `traceparent` sent upstream. Attributes
 * follow OpenTelemetry's GenAI conventions (`gen_ai.*`) plus Switchyard's own (`switchyard.*`).
 *
 * With telemetry off there is no `Tracer` at all: the pipeline's `trace` is null and the request
 * path allocates nothing for it. Unsampled requests get null too.
 *
 * @example
 * const trace = tracer?.begin(request, 'chat') ?? null
 * const attempt = trace?.attempt(...)   // ctx.traceparent = attempt.traceparent
 * trace?.finish({ status: 200, ... })
 */
import type { TelemetryConfig } from '../config/index.ts'
import type { Logger } from '../util/log.ts'
import { SpanExporter } from './exporter.ts'
import { nowMs, SPAN_KIND, type SpanRecord, STATUS_CODE } from './span.ts'
import { formatTraceparent, parseTraceparent, randomHex } from './trace-context.ts'

export { SpanExporter } from './exporter.ts'
export { parseTraceparent } from './trace-context.ts'

/** OpenTelemetry's `gen_ai.provider.name` for each provider kind (its well-known values where there is one). */
const PROVIDER_NAMES: Record<string, string> = {
  openai: 'openai',
  anthropic: 'anthropic',
  gemini: 'gcp.gemini',
  demo: 'switchyard.demo',
}
export const providerName = (kind: string) => PROVIDER_NAMES[kind] ?? kind

/** A span's status until it ends in error (then replaced, never written into): one object for all. */
const UNSET: SpanRecord['status'] = Object.freeze({ code: STATUS_CODE.unset })

/**
 * Span names (`<operation> <model>`) made once per operation and model: a name built per span
 * was a rope, flattened again (a second allocation) when the encoder read it. The models are the
 * catalogue's, so the cache is small; past {@link MAX_NAMES} (a catalogue reloaded many times)
 * it starts again.
 */
const NAMES = new Map<string, Map<string, string>>()
const MAX_NAMES = 4096
let names = 0

function spanName(operation: string, model: string): string {
  const cached = NAMES.get(operation)?.get(model)
  if (cached !== undefined) return cached
  if (++names > MAX_NAMES) {
    NAMES.clear()
    names = 1
  }
  let byModel = NAMES.get(operation)
  if (!byModel) {
    byModel = new Map()
    NAMES.set(operation, byModel)
  }
  const name = `${operation} ${model}`
  byModel.set(model, name)
  return name
}

/** One upstream attempt's span, open until the attempt is judged. */
export interface AttemptSpan {
  /** What the attempt sends upstream: this span as the parent. */
  traceparent: string
  record: SpanRecord
}

/** How the request ended, for its span and its answering attempt's. */
export interface RequestEnd {
  status: number
  errorCode: string | null
  usage: { prompt_tokens: number; completion_tokens: number } | null
  /** The answering model's prefixed id, and its upstream name. */
  responseModel: string | null
  upstreamModel: string | null
  costMicros: number | null
  attempts: number
}

/**
 * A request's spans. Each span's attributes object is written with every key it may get (unset:
 * `undefined`, not sent) so it is allocated once at its full shape, not grown key by key.
 */
export class RequestTrace {
  private readonly span: SpanRecord
  private open: AttemptSpan[] = []
  private ended = false

  constructor(
    private readonly exporter: SpanExporter,
    traceId: string,
    parentSpanId: string | null,
    operation: string,
  ) {
    this.span = {
      traceId,
      spanId: randomHex(8),
      parentSpanId,
      name: operation,
      kind: SPAN_KIND.server,
      startMs: nowMs(),
      endMs: 0,
      attributes: {
        'gen_ai.operation.name': operation,
        'gen_ai.request.model': undefined,
        'gen_ai.provider.name': undefined,
        'switchyard.account': undefined,
        'switchyard.key_id': undefined,
        'switchyard.surface': undefined,
        'switchyard.request_id': undefined,
        'switchyard.client_request_id': undefined,
        'http.response.status_code': undefined,
        'switchyard.attempts': undefined,
        'gen_ai.response.model': undefined,
        'gen_ai.usage.input_tokens': undefined,
        'gen_ai.usage.output_tokens': undefined,
        'switchyard.cost_usd': undefined,
        'error.type': undefined,
      },
      status: UNSET,
    }
  }

  get traceId(): string {
    return this.span.traceId
  }

  /** What is known once the request is routed: the model asked for, the caller. */
  routed(a: {
    model: string
    providerKind: string
    account: string
    keyId: string
    surface: string
    /** The gateway's own id (the logs'); `clientRequestId`: the client's x-request-id, if sent. */
    requestId: string
    clientRequestId?: string | null
  }): void {
    const attrs = this.span.attributes
    this.span.name = spanName(attrs['gen_ai.operation.name'] as string, a.model)
    attrs['gen_ai.request.model'] = a.model
    attrs['gen_ai.provider.name'] = providerName(a.providerKind)
    attrs['switchyard.account'] = a.account
    attrs['switchyard.key_id'] = a.keyId
    attrs['switchyard.surface'] = a.surface
    attrs['switchyard.request_id'] = a.requestId
    if (a.clientRequestId) attrs['switchyard.client_request_id'] = a.clientRequestId
  }

  /** A child span for one upstream attempt. */
  attempt(a: {
    providerKind: string
    provider: string
    model: string
    upstreamModel: string
    key: number
    n: number
  }): AttemptSpan {
    const spanId = randomHex(8)
    const record: SpanRecord = {
      traceId: this.span.traceId,
      spanId,
      parentSpanId: this.span.spanId,
      name: spanName(this.span.attributes['gen_ai.operation.name'] as string, a.upstreamModel),
      kind: SPAN_KIND.client,
      startMs: nowMs(),
      endMs: 0,
      attributes: {
        'gen_ai.operation.name': this.span.attributes['gen_ai.operation.name']!,
        'gen_ai.request.model': a.upstreamModel,
        'gen_ai.provider.name': providerName(a.providerKind),
        'switchyard.provider': a.provider,
        'switchyard.model': a.model,
        'switchyard.key_index': a.key,
        'switchyard.attempt': a.n,
        'switchyard.failure_kind': undefined,
        'error.type': undefined,
        'http.response.status_code': undefined,
        'gen_ai.response.model': undefined,
        'gen_ai.usage.input_tokens': undefined,
        'gen_ai.usage.output_tokens': undefined,
        'switchyard.cost_usd': undefined,
      },
      status: UNSET,
    }
    const span = { traceparent: formatTraceparent(record.traceId, spanId, true), record }
    this.open.push(span)
    return span
  }

  /** The attempt failed: its span ends now, with the failure's kind (DESIGN §10). */
  failed(span: AttemptSpan, kind: string, status: number, code: string): void {
    const i = this.open.indexOf(span)
    if (i < 0) return
    this.open.splice(i, 1)
    const attrs = span.record.attributes
    attrs['switchyard.failure_kind'] = kind
    attrs['error.type'] = code
    if (status) attrs['http.response.status_code'] = status
    span.record.status = { code: STATUS_CODE.error, message: code }
    this.close(span.record, nowMs())
  }

  /** The request's end: the attempts still open (the answering one) end with it. Once. */
  finish(e: RequestEnd): void {
    if (this.ended) return
    this.ended = true
    const end = nowMs()
    const attrs = this.span.attributes
    attrs['http.response.status_code'] = e.status
    attrs['switchyard.attempts'] = e.attempts
    if (e.responseModel) attrs['gen_ai.response.model'] = e.responseModel
    if (e.usage) {
      attrs['gen_ai.usage.input_tokens'] = e.usage.prompt_tokens
      attrs['gen_ai.usage.output_tokens'] = e.usage.completion_tokens
    }
    if (e.costMicros !== null) attrs['switchyard.cost_usd'] = e.costMicros / 1_000_000
    const error = e.errorCode !== null || e.status >= 400
    if (error) {
      attrs['error.type'] = e.errorCode ?? String(e.status)
      this.span.status = { code: STATUS_CODE.error, message: e.errorCode ?? undefined }
    }
    for (const a of this.open) {
      const at = a.record.attributes
      if (e.upstreamModel) at['gen_ai.response.model'] = e.upstreamModel
      if (e.usage) {
        at['gen_ai.usage.input_tokens'] = e.usage.prompt_tokens
        at['gen_ai.usage.output_tokens'] = e.usage.completion_tokens
      }
      if (e.costMicros !== null) at['switchyard.cost_usd'] = e.costMicros / 1_000_000
      if (error) {
        at['error.type'] = e.errorCode ?? String(e.status)
        a.record.status = { code: STATUS_CODE.error, message: e.errorCode ?? undefined }
      }
      this.close(a.record, end)
    }
    this.open = []
    this.close(this.span, end)
  }

  /** `end`: epoch ms, one clock read for every span a request's end closes. */
  private close(s: SpanRecord, end: number): void {
    s.endMs = end
    this.exporter.add(s)
  }
}

export class Tracer {
  readonly exporter: SpanExporter

  constructor(
    private readonly config: TelemetryConfig & { tracesUrl: string },
    log: Logger,
    version: string,
    intervalMs = 1_000,
  ) {
    this.exporter = new SpanExporter({
      url: config.tracesUrl,
      headers: config.headers,
      protocol: config.protocol,
      intervalMs,
      resource: { serviceName: 'switchyard', serviceVersion: version },
      log,
    })
  }

  /**
   * The request's trace, or null when it is not sampled: a client's `traceparent` decides by its
   * sampled flag (parent-based, as OpenTelemetry's default sampler); else `sample_ratio`.
   */
  begin(request: Request, operation: string): RequestTrace | null {
    const parent = parseTraceparent(request.headers.get('traceparent'))
    const sampled = parent ? parent.sampled : Math.random() < this.config.sampleRatio
    if (!sampled) return null
    return new RequestTrace(
      this.exporter,
      parent?.traceId ?? randomHex(16),
      parent?.spanId ?? null,
      operation,
    )
  }

  close(): Promise<void> {
    return this.exporter.flush()
  }
}

/** The tracer `telemetry` configures, or null when no endpoint is set (tracing off). */
export function createTracer(config: TelemetryConfig, log: Logger, version: string): Tracer | null {
  if (!config.tracesUrl || config.sampleRatio === 0) return null
  return new Tracer({ ...config, tracesUrl: config.tracesUrl }, log, version, config.exportIntervalMs)
}
