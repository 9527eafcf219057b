/**
 * @module
 * Spend the price table cannot see (DESIGN §11): request parameters that make the provider bill
 * more than tokens × the model's prices. Each is priced by the model's `pricing` where it says
 * how — a `service_tier` by that tier's token prices, a hosted tool billed per call by
 * `per_call` times the calls the request may make — and otherwise, when a money limit applies,
 * refused with 400 `unsupported_value` naming the field. Without a money limit the request passes
 * as before (priced where the pricing says how).
 *
 * What counts (read off the client's body, whichever surface: the fields do not overlap):
 * - `service_tier`: `priority` (and `fast`, OpenAI's other name for it) and `scale` need their
 *   tier's prices; `flex` bills at most the standard prices (OpenAI: half), so without its own
 *   prices it is charged at the standard ones; `auto`, `default` and Anthropic's `standard_only`
 *   are the standard prices; any other (`ultrafast`, which only a Responses upstream takes, or a
 *   tier the gateway does not know) cannot be priced.
 * - `web_search_options` (chat): one search per request (OpenAI's search models search once).
 * - hosted tools (`tools[i]`, also inside a `namespace`): web search (Responses `web_search*`,
 *   Anthropic `web_search_YYYYMMDD`), `file_search`, `code_interpreter` are billed per call, as
 *   many calls as the request bounds them to (`max_tool_calls` on Responses, the tool's
 *   `max_uses` on Messages) — unbounded is refused under a money limit, since no reservation
 *   covers it. Tools billed as tokens only (functions, `custom`, `mcp`, computer use, shells,
 *   Anthropic's bash, text editor, memory, web fetch, tool search) are nothing extra; any other
 *   hosted tool (`image_generation`, Anthropic's `code_execution`, a type the gateway does not
 *   know) cannot be priced and is refused under a money limit. Google's built-in tools (a Gemini
 *   body's `tools[i].googleSearch` …, received by a `gemini` provider only): Search grounding is one
 *   web search a request; Maps, URL context, code execution, file search cannot be priced.
 * - `prediction` (rejected predicted tokens are billed as output past `max_tokens`) and audio
 *   output (`modalities` with `audio`, or `audio`: audio tokens at audio prices) cannot be priced.
 * A model without `pricing` costs nothing (DESIGN §11), surcharges included. A field counts only
 * for the models whose upstream receives it: the chat fields (`service_tier`, `web_search_options`,
 * `prediction`, audio) an `openai` provider (translating adapters drop or refuse them); hosted and
 * server tools a provider that runs them (`openai` with `wire: responses`, `anthropic`; elsewhere
 * they are dropped or refused by the tool policy).
 */
import type { ModelConfig, PerCallTool, PricedTier, PricingConfig, ProviderConfig } from '../config/index.ts'
import { GatewayError } from '../util/errors.ts'
import { microUnits } from '../util/micro-units.ts'
import { clip } from '../util/text.ts'
import { type DearestPrices, dearestPrices, type PricingUnits, pricingUnits } from './pricing.ts'

/**
 * What a request asks beyond the price table; `hosted`: a tool (else a chat field); `google`: one of
 * Google's built-in tools (a Gemini request's), which only a `gemini` provider receives.
 */
type Ask = { param: string; hosted?: boolean; google?: boolean; responsesOnly?: boolean } & (
  | { tier: PricedTier }
  /** `calls`: at most this many (null: unbounded). */
  | { tool: PerCallTool; calls: number | null }
  | { unpriced: string }
)

/** A model that may answer, with what its provider is (catalogue entries fit). */
export interface Reached {
  model: ModelConfig
  provider: Pick<ProviderConfig, 'kind' | 'wire'>
}

/** Whether the upstream of `r` receives the ask (see the module's note). */
const receives = (r: Reached, a: Ask): boolean =>
  a.google
    ? r.provider.kind === 'gemini'
    : a.responsesOnly
      ? r.provider.kind === 'openai' && r.provider.wire === 'responses'
      : a.hosted
        ? r.provider.kind === 'anthropic' || (r.provider.kind === 'openai' && r.provider.wire === 'responses')
        : r.provider.kind === 'openai'

/** What the request's surcharges are priced as. */
export interface Surcharge {
  /** The tier whose prices apply where the model sets them, or null (the standard prices). */
  tier: PricedTier | null
  /** Hosted tools billed per call, and the calls reserved (and charged) for each. */
  calls: Array<{ tool: PerCallTool; calls: number }>
}

export const NO_SURCHARGE: Surcharge = { tier: null, calls: [] }

/** Hosted tool types billed as tokens only (Responses, Messages): nothing beyond the price table. */
const TOKENS_ONLY =
  /^(function|custom|namespace|mcp|mcp_toolset|computer_use(_preview)?|local_shell|shell|apply_patch|(bash|text_editor|computer|memory|web_fetch|tool_search_tool_[a-z]+)(_\d{8})?)$/

/** The per-call tool a hosted tool type is billed as, if any. */
function perCallTool(type: string): PerCallTool | null {
  if (/^web_search(_preview)?(_\d{4}_\d{2}_\d{2}|_\d{8})?$/.test(type)) return 'web_search'
  if (type === 'file_search' || type === 'code_interpreter') return type
  return null
}

/**
 * Google's built-in tools, by their key in a Gemini `tools[i]` object: Search grounding is billed
 * per grounded prompt (one call a request); the others are billed in ways the request cannot bound
 * (Maps grounding, fetched URLs' tokens, executed code's output, file search): unpriced.
 */
const GOOGLE_TOOLS: Record<string, PerCallTool | null> = {
  googleSearch: 'web_search',
  googleSearchRetrieval: 'web_search',
  googleMaps: null,
  urlContext: null,
  codeExecution: null,
  fileSearch: null,
  computerUse: null,
  enterpriseWebSearch: null,
}

/**
 * `service_tier` values billed at the standard prices: OpenAI's `auto` (the project's tier) and
 * `default`, Anthropic's `standard_only` (never priority capacity). Any other is a surcharge:
 * `fast` is OpenAI's other name for `priority` (served and billed as it); `ultrafast` (Responses
 * only) and a tier the gateway does not know have no price in `pricing`.
 */
const STANDARD_TIERS = new Set(['auto', 'default', 'standard_only'])

const given = (v: unknown) => v !== undefined && v !== null
const count = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : null)

/** The surcharges a client body asks for, in field order. */
function asksOf(body: Record<string, unknown>): Ask[] {
  const asks: Ask[] = []
  const tier = body.service_tier
  if (typeof tier === 'string' && !STANDARD_TIERS.has(tier)) {
    const priced = tier === 'fast' ? 'priority' : tier
    if (priced === 'priority' || priced === 'scale' || priced === 'flex')
      asks.push({ param: 'service_tier', tier: priced })
    else
      asks.push({
        param: 'service_tier',
        unpriced: `the "${clip(tier)}" service tier`,
        ...(tier === 'ultrafast' ? { responsesOnly: true } : {}),
      })
  }
  if (given(body.web_search_options)) asks.push({ param: 'web_search_options', tool: 'web_search', calls: 1 })
  if (given(body.prediction)) asks.push({ param: 'prediction', unpriced: 'predicted output' })
  if (Array.isArray(body.modalities) && body.modalities.includes('audio'))
    asks.push({ param: 'modalities', unpriced: 'audio output' })
  else if (given(body.audio)) asks.push({ param: 'audio', unpriced: 'audio output' })
  const maxCalls = count(body.max_tool_calls)
  const tool = (t: unknown, param: string) => {
    if (typeof t !== 'object' || t === null) return
    const { type, max_uses, tools } = t as { type?: unknown; max_uses?: unknown; tools?: unknown }
    if (typeof type !== 'string') {
      // A client tool without a type (Messages, Gemini's functionDeclarations), or Google's own.
      for (const key of Object.keys(t)) {
        if (!Object.hasOwn(GOOGLE_TOOLS, key)) continue
        const perCall = GOOGLE_TOOLS[key]
        const at = `${param}.${key}`
        if (perCall) asks.push({ param: at, hosted: true, google: true, tool: perCall, calls: 1 })
        else asks.push({ param: at, hosted: true, google: true, unpriced: `Google's built-in tool "${key}"` })
      }
      return
    }
    if (type === 'namespace' && Array.isArray(tools))
      for (const [j, u] of tools.entries()) tool(u, `${param}.tools[${j}]`)
    if (TOKENS_ONLY.test(type)) return
    const perCall = perCallTool(type)
    if (perCall) asks.push({ param, hosted: true, tool: perCall, calls: count(max_uses) ?? maxCalls })
    else asks.push({ param, hosted: true, unpriced: `the hosted tool "${clip(type)}"` })
  }
  if (Array.isArray(body.tools)) for (const [i, t] of body.tools.entries()) tool(t, `tools[${i}]`)
  return asks
}

function refuse(param: string, why: string): GatewayError {
  return new GatewayError(
    400,
    'unsupported_value',
    `${param}: ${why}, and this request is under a money limit (a plan or key budget), which must be able to price everything the provider bills. Leave ${param} out, or ask the administrator to price it in the model's pricing.`,
    { param },
  )
}

/**
 * The surcharges of `body` over every model that may answer (`reached`): refused by the first
 * field that a priced model receiving it does not price when `money` (a money limit applies),
 * else priced.
 */
export function surchargeOf(body: unknown, reached: readonly Reached[], money: boolean): Surcharge {
  if (typeof body !== 'object' || body === null) return NO_SURCHARGE
  const asks = asksOf(body as Record<string, unknown>)
  if (!asks.length) return NO_SURCHARGE
  const out: Surcharge = { tier: null, calls: [] }
  for (const a of asks) {
    const priced = reached
      .filter((r) => receives(r, a))
      .map((r) => r.model.pricing)
      .filter((p): p is PricingConfig => p !== undefined)
    if ('tier' in a) {
      // Flex bills at most the standard prices: charged at those unless it has its own.
      const missing = a.tier !== 'flex' && priced.some((p) => !p.service_tier?.[a.tier])
      if (missing && money)
        throw refuse(
          a.param,
          `the "${a.tier}" service tier is billed above the model's standard prices, which is all its pricing says`,
        )
      out.tier = a.tier
    } else if ('tool' in a) {
      if (!money) {
        if (a.calls !== null) out.calls.push({ tool: a.tool, calls: a.calls })
        continue
      }
      if (!priced.length) continue
      if (priced.some((p) => p.per_call?.[a.tool] === undefined))
        throw refuse(
          a.param,
          `${a.tool.replace('_', ' ')} is billed per call, and the model's pricing has no per_call.${a.tool} price`,
        )
      if (a.calls === null)
        throw refuse(
          a.param,
          `${a.tool.replace('_', ' ')} is billed per call and nothing bounds the calls (set max_tool_calls, or the tool's max_uses on /v1/messages)`,
        )
      out.calls.push({ tool: a.tool, calls: a.calls })
    } else if (money && priced.length)
      throw refuse(a.param, `${a.unpriced} is billed beyond the model's token prices`)
  }
  return out
}

const TIER_UNITS = new WeakMap<object, PricingUnits>()

/** The model's prices for this request's tier (the tier's where the model sets them), or null: free. */
export function tierUnits(
  model: ModelConfig,
  s: Surcharge,
  standard: PricingUnits | null,
): PricingUnits | null {
  const t = s.tier && model.pricing?.service_tier?.[s.tier]
  if (!t) return standard
  let u = TIER_UNITS.get(t)
  if (!u) {
    u = pricingUnits(t)
    TIER_UNITS.set(t, u)
  }
  return u
}

/** Micro-dollars of the per-call tools reserved, at the model's per-call prices (0 without pricing). */
export function perCallMicros(model: ModelConfig, s: Surcharge): number {
  let micros = 0
  for (const c of s.calls) micros += c.calls * (microUnits(model.pricing?.per_call?.[c.tool] ?? 0) ?? 0)
  return micros
}

/**
 * The dearest prices of a reservation over `models` with the surcharges: the tier's token prices,
 * and the dearest model's per-call micro-dollars folded into the input price — `inputTokens` × the
 * raised input price covers them (rounded up: at most one micro-dollar over), so every backend
 * reserves them as it reserves tokens, with no amount of their own.
 */
export function surchargedPrice(
  models: readonly ModelConfig[],
  s: Surcharge,
  inputTokens: number,
  /** The model's standard prices (model-cost.ts `unitsOf`). */
  unitsOf: (m: ModelConfig) => PricingUnits | null,
): DearestPrices | null {
  let best: DearestPrices | null = null
  let flat = 0
  for (const m of models) {
    const u = tierUnits(m, s, unitsOf(m))
    flat = Math.max(flat, perCallMicros(m, s))
    if (!u) continue
    const p = dearestPrices(u)
    best = best ? { input: Math.max(best.input, p.input), output: Math.max(best.output, p.output) } : p
  }
  if (flat > 0) {
    const base = best ?? { input: 0, output: 0 }
    best = { ...base, input: base.input + Math.ceil((flat * 1_000_000) / Math.max(1, inputTokens)) }
  }
  return best
}
