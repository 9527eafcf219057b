/**
 * @module
 * Resolves `alerts` and `telemetry` with their defaults, and the standard OpenTelemetry variables
 * (`OTEL_EXPORTER_OTLP_ENDPOINT`, `_TRACES_ENDPOINT`, `_HEADERS`, `_PROTOCOL`,
 * `OTEL_TRACES_SAMPLER_ARG`), which win over the file as every environment variable does (§2).
 */
import type { RawConfig } from './schema.ts'
import { type AlertEvent, OTLP_PROTOCOLS, type OtlpProtocol, type WebhookFormat } from './schema-signals.ts'

export interface WebhookConfig {
  url: string
  secret: string
  events: AlertEvent[]
  format: WebhookFormat
}

export interface AlertsConfig {
  webhooks: WebhookConfig[]
  planExpiringDays: number
  backoffMs: number
  maxBackoffMs: number
  giveUpAfterMs: number
  pollMs: number
}

export interface TelemetryConfig {
  /** The full traces URL (`…/v1/traces`); null = tracing off. */
  tracesUrl: string | null
  headers: Record<string, string>
  protocol: OtlpProtocol
  sampleRatio: number
  exportIntervalMs: number
}

export function resolveAlerts(raw: RawConfig): AlertsConfig {
  const a = raw.alerts
  return {
    webhooks: (a?.webhooks ?? []).map((w) => ({ ...w, format: w.format ?? 'json' })),
    planExpiringDays: a?.plan_expiring_days ?? 3,
    backoffMs: a?.backoff_ms ?? 5_000,
    maxBackoffMs: a?.max_backoff_ms ?? 600_000,
    giveUpAfterMs: (a?.give_up_after_s ?? 3 * 86_400) * 1000,
    pollMs: a?.poll_ms ?? 1_000,
  }
}

/** `k1=v1,k2=v2`, values percent-encoded (the OTLP exporter specification's format). */
function envHeaders(text: string): Record<string, string> | null {
  const out: Record<string, string> = {}
  for (const part of text.split(',')) {
    if (!part.trim()) continue
    const eq = part.indexOf('=')
    if (eq <= 0) return null
    try {
      out[decodeURIComponent(part.slice(0, eq).trim())] = decodeURIComponent(part.slice(eq + 1).trim())
    } catch {
      return null
    }
  }
  return out
}

const withTracesPath = (base: string) => `${base.replace(/\/+$/, '')}/v1/traces`

/** `problems` gains one entry per variable that is not what it must be (the path it stands for). */
export function resolveTelemetry(
  raw: RawConfig,
  env: Record<string, string | undefined>,
  problems: Array<{ path: string; message: string }>,
): TelemetryConfig {
  const t = raw.telemetry
  let tracesUrl = t?.otlp_endpoint ? withTracesPath(t.otlp_endpoint) : null
  const urlOk = (v: string) => /^https?:\/\/\S+$/.test(v)
  const fromEnv = (name: string, path: string, value: string, why: string) =>
    problems.push({ path, message: `${why} (from environment variable ${name}: ${JSON.stringify(value)})` })
  const full = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT
  if (full) {
    if (urlOk(full)) tracesUrl = full
    else
      fromEnv(
        'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
        '/telemetry/otlp_endpoint',
        '…',
        'expected an http(s) URL',
      )
  } else if (base) {
    if (urlOk(base)) tracesUrl = withTracesPath(base)
    // Not echoed, as the headers are not: an endpoint may carry credentials (user:pass@, a token).
    else fromEnv('OTEL_EXPORTER_OTLP_ENDPOINT', '/telemetry/otlp_endpoint', '…', 'expected an http(s) URL')
  }
  let headers = { ...(t?.headers ?? {}) }
  const h = env.OTEL_EXPORTER_OTLP_HEADERS
  if (h) {
    const parsed = envHeaders(h)
    if (parsed) headers = { ...headers, ...parsed }
    else
      fromEnv(
        'OTEL_EXPORTER_OTLP_HEADERS',
        '/telemetry/headers',
        '…',
        'expected name=value pairs separated by commas',
      )
  }
  let protocol: OtlpProtocol = t?.protocol ?? 'http/protobuf'
  const p = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL
  if (p) {
    if ((OTLP_PROTOCOLS as readonly string[]).includes(p)) protocol = p as OtlpProtocol
    else
      fromEnv(
        'OTEL_EXPORTER_OTLP_PROTOCOL',
        '/telemetry/protocol',
        p,
        `expected ${OTLP_PROTOCOLS.join(' or ')}`,
      )
  }
  let sampleRatio = t?.sample_ratio ?? 1
  const arg = env.OTEL_TRACES_SAMPLER_ARG
  if (arg) {
    const n = Number(arg)
    if (arg.trim() !== '' && n >= 0 && n <= 1) sampleRatio = n
    else fromEnv('OTEL_TRACES_SAMPLER_ARG', '/telemetry/sample_ratio', arg, 'expected a number from 0 to 1')
  }
  return { tracesUrl, headers, protocol, sampleRatio, exportIntervalMs: t?.export_interval_ms ?? 1_000 }
}
