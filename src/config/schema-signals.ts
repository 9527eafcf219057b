/**
 * @module
 * The `alerts` and `telemetry` sections of `switchyard.yaml` (DESIGN §15): what tells the operator
 * without being asked — signed webhooks and OpenTelemetry traces.
 */
import { Type as T } from '@sinclair/typebox'
import { HeaderValue, Secret } from './schema-units.ts'

const Closed = { additionalProperties: false } as const

/**
 * Every event a webhook may subscribe to. `reload.applied` / `reload.refused` are a live reload's
 * outcome (app/reload.ts `reloadAlert`). `alert.test` is what `switchyard alerts test` sends, to
 * every webhook whatever its list.
 */
export const ALERT_EVENTS = [
  'budget.threshold',
  'tokens.threshold',
  'circuit.opened',
  'circuit.closed',
  'key.suspended',
  'plan.expiring',
  'reload.applied',
  'reload.refused',
] as const
export type AlertEvent = (typeof ALERT_EVENTS)[number] | 'alert.test'

/** Payload shapes: `json` (the signed event), or the text Slack's / Discord's incoming webhooks take. */
export const WEBHOOK_FORMATS = ['json', 'slack', 'discord'] as const
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number]

export const WebhookSchema = T.Object(
  {
    url: T.String({ pattern: '^https?://[^\\s]+$', patternWhy: 'an http:// or https:// URL without spaces' }),
    /** HMAC-SHA256 key of `x-switchyard-signature`; at least 16 characters. */
    secret: Secret({ minLength: 16 }),
    events: T.Array(T.Union(ALERT_EVENTS.map((e) => T.Literal(e))), { minItems: 1, uniqueItems: true }),
    /** Default `json`. */
    format: T.Optional(T.Union(WEBHOOK_FORMATS.map((f) => T.Literal(f)))),
  },
  Closed,
)

export const AlertsSchema = T.Object(
  {
    webhooks: T.Array(WebhookSchema),
    /** `plan.expiring` is sent this many days before a paid plan ends. Default 3. */
    plan_expiring_days: T.Optional(T.Integer({ minimum: 1, maximum: 365 })),
    /** The first retry waits this long, doubled each time up to `max_backoff_ms`. Defaults 5 s and 10 min. */
    backoff_ms: T.Optional(T.Integer({ minimum: 10, maximum: 3_600_000 })),
    max_backoff_ms: T.Optional(T.Integer({ minimum: 10, maximum: 86_400_000 })),
    /** A delivery unanswered with a 2xx this long after its event is given up. Default 3 days. */
    give_up_after_s: T.Optional(T.Integer({ minimum: 60, maximum: 30 * 86_400 })),
    /** How often the sender looks for due deliveries. Default 1000. */
    poll_ms: T.Optional(T.Integer({ minimum: 10, maximum: 60_000 })),
  },
  Closed,
)

export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number]

export const TelemetrySchema = T.Object(
  {
    /** The collector's base URL (`/v1/traces` is added, as OTEL_EXPORTER_OTLP_ENDPOINT's is). */
    otlp_endpoint: T.Optional(
      T.String({ pattern: '^https?://[^\\s]+$', patternWhy: 'an http:// or https:// URL without spaces' }),
    ),
    /** Sent with every export (Langfuse: `Authorization: Basic …`). */
    headers: T.Optional(
      T.Record(T.String({ pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$" }), HeaderValue, {
        additionalProperties: false,
      }),
    ),
    protocol: T.Optional(T.Union(OTLP_PROTOCOLS.map((p) => T.Literal(p)))),
    /** Share of requests traced (a client's sampled `traceparent` is always followed). Default 1. */
    sample_ratio: T.Optional(T.Number({ minimum: 0, maximum: 1 })),
    /** Spans are sent in batches at this interval (or at 512 waiting). Default 1000. */
    export_interval_ms: T.Optional(T.Integer({ minimum: 10, maximum: 60_000 })),
  },
  Closed,
)
