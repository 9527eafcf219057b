/**
 * @module
 * The providers part of the `switchyard.yaml` schema: a provider (kind, endpoint, keys, timeouts,
 * retries, circuit) and its models (features, pricing, budget). Every object is closed, as in
 * `schema.ts`, which assembles the whole file's schema.
 *
 * @example
 * Value.Check(ProviderSchema, { kind: 'demo', prefix: 'demo', models: [...] })
 */
import { Type as T } from '@sinclair/typebox'
import { MODEL_TYPES } from '../operations/operation.ts'
import { BUDGET_PERIODS } from './limit-settings.ts'
import { ModelId } from './schema-aliases.ts'
import {
  Closed,
  HEADER_NAME,
  HeaderValue,
  Ms,
  NamedMap,
  PositiveInt,
  Secret,
  spanSeconds,
  timerSeconds,
} from './schema-units.ts'

export const FEATURES = [
  'streaming',
  'tools',
  'parallel_tool_calls',
  'vision',
  'audio_input',
  'json_mode',
  'json_schema',
  'logprobs',
  'n',
  'system_messages',
  'reasoning',
  /** Continues a trailing assistant message (a stream cut mid-answer may be finished on it). */
  'prefill',
] as const
export type Feature = (typeof FEATURES)[number]

export const PROVIDER_KINDS = ['openai', 'anthropic', 'gemini', 'demo'] as const
export type ProviderKind = (typeof PROVIDER_KINDS)[number]

/** USD per 1M tokens; at most 6 decimals. Cached input defaults to input. */
const TierPricingSchema = T.Object(
  {
    input: T.Number({ minimum: 0 }),
    output: T.Number({ minimum: 0 }),
    cached_input: T.Optional(T.Number({ minimum: 0 })),
  },
  Closed,
)

/**
 * USD per 1M tokens (DESIGN §11); at most 6 decimals. Cached input, cache writes and reasoning
 * default to input, input and output. `service_tier`: the prices of a tier a request may ask for
 * (OpenAI's `priority`, `flex`, `scale`); `per_call`: USD per call of a hosted tool. What a request
 * asks beyond these is refused under a money limit (limits/surcharge.ts).
 */
export const PricingSchema = T.Object(
  {
    input: T.Number({ minimum: 0 }),
    output: T.Number({ minimum: 0 }),
    cached_input: T.Optional(T.Number({ minimum: 0 })),
    cache_write: T.Optional(T.Number({ minimum: 0 })),
    reasoning: T.Optional(T.Number({ minimum: 0 })),
    service_tier: T.Optional(
      T.Object(
        {
          priority: T.Optional(TierPricingSchema),
          flex: T.Optional(TierPricingSchema),
          scale: T.Optional(TierPricingSchema),
        },
        Closed,
      ),
    ),
    per_call: T.Optional(
      T.Object(
        {
          web_search: T.Optional(T.Number({ minimum: 0 })),
          file_search: T.Optional(T.Number({ minimum: 0 })),
          code_interpreter: T.Optional(T.Number({ minimum: 0 })),
        },
        Closed,
      ),
    ),
  },
  Closed,
)

/** Money per calendar period (UTC); at most 6 decimals. */
export const BudgetSchema = T.Object(
  { usd: T.Number({ exclusiveMinimum: 0 }), period: T.Union(BUDGET_PERIODS.map((p) => T.Literal(p))) },
  Closed,
)

export const ModelSchema = T.Object(
  {
    name: T.String({ minLength: 1, pattern: '^[^\\s]+$', patternWhy: 'a name: not empty, no spaces' }),
    /** Name sent upstream when it differs from `name`. */
    upstream_name: T.Optional(T.String({ minLength: 1 })),
    /** Default `chat`. Embedding models take neither `max_output_tokens` nor `features`. */
    type: T.Optional(T.Union(MODEL_TYPES.map((t) => T.Literal(t)))),
    context_window: PositiveInt,
    /** Required for chat models (checked at load with the model's type). */
    max_output_tokens: T.Optional(PositiveInt),
    /** Embedding models only: the vector length the model returns when `dimensions` is not sent. */
    dimensions: T.Optional(PositiveInt),
    temperature: T.Optional(
      T.Object({ min: T.Number({ minimum: 0 }), max: T.Number({ maximum: 2 }) }, Closed),
    ),
    /** Required for chat models (checked at load with the model's type). */
    features: T.Optional(T.Array(T.Union(FEATURES.map((f) => T.Literal(f))), { uniqueItems: true })),
    tier: T.Optional(T.String({ minLength: 1 })),
    description: T.Optional(T.String()),
    /**
     * What happens to provider-run tools this model's upstream cannot run (Responses hosted tools,
     * Anthropic's server tools, Google's built-ins). `reject` (default): 400 naming `tools[i]`;
     * `drop`: left out, and named in the `x-switchyard-dropped-tools` response header.
     */
    unsupported_tools: T.Optional(T.Union([T.Literal('reject'), T.Literal('drop')])),
    /**
     * The model cannot turn reasoning off (Gemini 2.5 Pro, Gemini 3 Pro): a request for no reasoning
     * (`reasoning_effort: "none"`) is refused by name instead of sent. Default false: "none" turns it
     * off (Gemini: `thinkingBudget: 0`; Anthropic: no `thinking`).
     */
    always_reasons: T.Optional(T.Boolean()),
    /** Absent: the model costs nothing (and `/v1/models` says so). */
    pricing: T.Optional(PricingSchema),
    /** `prefix/name` of configured models tried in order when this one fails (DESIGN §10). */
    fallbacks: T.Optional(T.Array(ModelId, { uniqueItems: true })),
  },
  Closed,
)

export const TimeoutsSchema = T.Object(
  {
    /** Until the upstream's response headers arrive (covers connecting). */
    first_byte_ms: T.Optional(Ms),
    /** Stream: from the headers until the first content-bearing event. */
    first_token_ms: T.Optional(Ms),
    /** Longest silence between two stream events. */
    idle_ms: T.Optional(Ms),
    /** Whole upstream exchange, stream included. */
    total_ms: T.Optional(Ms),
  },
  Closed,
)

/** One key of a provider's pool; `base_url` overrides the provider's for this key. */
export const KeySchema = T.Object(
  {
    api_key: Secret(),
    weight: T.Optional(PositiveInt),
    base_url: T.Optional(T.String({ pattern: '^https?://', patternWhy: 'an http:// or https:// URL' })),
  },
  Closed,
)

/** `attempts` = retries of one target after its first try. */
export const RetrySchema = T.Object(
  {
    attempts: T.Optional(T.Integer({ minimum: 0, maximum: 10 })),
    backoff_ms: T.Optional(Ms),
    max_backoff_ms: T.Optional(Ms),
    max_retry_after_s: T.Optional(timerSeconds(0)),
  },
  Closed,
)

/** Per (key, model): `failures` consecutive failures skip the target for `cooldown_s`. */
export const CircuitSchema = T.Object(
  { failures: T.Optional(PositiveInt), cooldown_s: T.Optional(spanSeconds(1)) },
  Closed,
)

export const ProviderSchema = T.Object(
  {
    prefix: T.String({ minLength: 1, pattern: '^[A-Za-z0-9._-]+$' }),
    kind: T.Union(PROVIDER_KINDS.map((k) => T.Literal(k))),
    base_url: T.Optional(T.String({ pattern: '^https?://', patternWhy: 'an http:// or https:// URL' })),
    api_key: T.Optional(Secret()),
    /** A key pool instead of the one `api_key`, spread by weight. */
    keys: T.Optional(T.Array(KeySchema, { minItems: 1 })),
    retry: T.Optional(RetrySchema),
    circuit: T.Optional(CircuitSchema),
    /** Extra headers sent upstream (e.g. OpenAI-Organization). */
    headers: T.Optional(
      NamedMap('header name', HEADER_NAME, "letters, digits and !#$%&'*+.^_`|~- only", HeaderValue),
    ),
    /**
     * OpenAI only: `responses` when the upstream also serves `POST /responses`, so Responses
     * requests pass through untranslated (hosted tools included). Default `chat`.
     */
    wire: T.Optional(T.Union([T.Literal('chat'), T.Literal('responses')])),
    /**
     * OpenAI only: the name the output-token limit is sent under. `max_completion_tokens` (default,
     * OpenAI's current name, required by its reasoning models); `max_tokens` for older compatible
     * servers that know only that name.
     */
    max_tokens_param: T.Optional(T.Union([T.Literal('max_completion_tokens'), T.Literal('max_tokens')])),
    /** Anthropic only: the `anthropic-version` header. */
    anthropic_version: T.Optional(T.String()),
    timeouts: T.Optional(TimeoutsSchema),
    /** Largest upstream JSON body, error body or single stream event; larger → 502. Default 32 MiB. */
    max_response_bytes: T.Optional(PositiveInt),
    models: T.Array(ModelSchema, { minItems: 1 }),
  },
  Closed,
)
