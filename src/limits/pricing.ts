/**
 * @module
 * Money (DESIGN §11): a model's `pricing` in USD per 1M tokens → the cost of a request in integer
 * micro-dollars. Prices are kept as integer micro-dollars per 1M tokens (config allows at most 6
 * decimals, so the conversion is exact) and multiplied out in BigInt: no float ever touches a
 * cost, so a budget's sum of costs is exact however many requests it holds.
 *
 * A request's cost is rounded up to the micro-dollar (at most $0.000001 over the exact price, never
 * under). Input tokens read from the provider's cache are priced as `cached_input`, tokens written to
 * it as `cache_write` (both default to `input`); reasoning tokens, which providers count inside the
 * output, as `reasoning` (default `output`). A model without pricing costs nothing.
 *
 * @example
 * requestCostMicros(pricingUnits({ input: 0.15, output: 0.6 }), { input: 1000, output: 500 }) // → 450
 */
import { microUnits } from '../util/micro-units.ts'

/** USD per 1M tokens, as configured. */
export interface Pricing {
  input: number
  output: number
  cached_input?: number
  cache_write?: number
  reasoning?: number
}

/** The same prices as integers: micro-dollars per 1M tokens. */
export interface PricingUnits {
  input: bigint
  output: bigint
  cachedInput: bigint
  cacheWrite: bigint
  reasoning: bigint
}

/** Token counts of a request; `input` and `output` are totals that include the details. */
export interface TokenCounts {
  input: number
  output: number
  /** Of `input`, read from the provider's prompt cache. */
  cachedInput?: number
  /** Of `input`, written to the provider's prompt cache. */
  cacheWrite?: number
  /** Of `output`, reasoning (thinking) tokens. */
  reasoning?: number
}

const MILLION = 1_000_000n

/** A price with at most 6 decimals, as integer micro-dollars per 1M tokens; null when it has more. */
export function priceUnits(usdPerMillion: number): bigint | null {
  const units = microUnits(usdPerMillion)
  return units === null ? null : BigInt(units)
}

/** The integer prices of a validated `pricing` (config validation refused any with 7+ decimals). */
export function pricingUnits(p: Pricing): PricingUnits {
  const u = (v: number | undefined, fallback: bigint): bigint =>
    v === undefined ? fallback : (priceUnits(v) ?? fallback)
  const input = u(p.input, 0n)
  const output = u(p.output, 0n)
  return {
    input,
    output,
    cachedInput: u(p.cached_input, input),
    cacheWrite: u(p.cache_write, input),
    reasoning: u(p.reasoning, output),
  }
}

const big = (n: number | undefined): bigint => BigInt(Math.max(0, Math.trunc(n ?? 0)))

/** Micro-dollars for these tokens at these prices, rounded up. 0 without pricing. */
export function requestCostMicros(units: PricingUnits | null, t: TokenCounts): number {
  if (!units) return 0
  // Exact in doubles while the counts and the total stay within 2^53 (the counts: so that the
  // differences below are exact; the total: every term is non-negative, so none passed it either,
  // and a product past it rounds to at least 2^53): no BigInt a request.
  const tokens = (n: number | undefined) => Math.max(0, Math.trunc(n ?? 0))
  const inTokens = tokens(t.input)
  const outTokens = tokens(t.output)
  const readTokens = Math.min(tokens(t.cachedInput), inTokens)
  const writeTokens = Math.min(tokens(t.cacheWrite), inTokens - readTokens)
  const thinkTokens = Math.min(tokens(t.reasoning), outTokens)
  const sum =
    (inTokens - readTokens - writeTokens) * Number(units.input) +
    readTokens * Number(units.cachedInput) +
    writeTokens * Number(units.cacheWrite) +
    (outTokens - thinkTokens) * Number(units.output) +
    thinkTokens * Number(units.reasoning)
  if (
    inTokens <= Number.MAX_SAFE_INTEGER &&
    outTokens <= Number.MAX_SAFE_INTEGER &&
    sum <= Number.MAX_SAFE_INTEGER
  )
    return ceilMillions(sum)
  const input = big(t.input)
  const cached = min(big(t.cachedInput), input)
  const written = min(big(t.cacheWrite), input - cached)
  const output = big(t.output)
  const reasoning = min(big(t.reasoning), output)
  const total =
    (input - cached - written) * units.input +
    cached * units.cachedInput +
    written * units.cacheWrite +
    (output - reasoning) * units.output +
    reasoning * units.reasoning
  return Number((total + MILLION - 1n) / MILLION)
}

/**
 * The most a token of the request can cost, micro-dollars per 1M tokens: an input token at the
 * dearer of the input and cache-write prices (a cache read is never dearer), an output token at
 * the dearer of the output and reasoning prices. Plain numbers, exact (config validation keeps
 * every price a safe integer of micro-dollars): what a reservation is priced at, and what travels
 * to PostgreSQL and Redis as JSON.
 */
export interface DearestPrices {
  input: number
  output: number
}

/** The dearest prices of these prices. */
export function dearestPrices(u: PricingUnits): DearestPrices {
  return { input: Number(max(u.input, u.cacheWrite)), output: Number(max(u.output, u.reasoning)) }
}

/** The most a reservation can cost: every input token and every output token at its dearest price. */
export function highestCostMicros(
  p: DearestPrices | null,
  inputBound: number,
  outputAllowance: number,
): number {
  if (!p) return 0
  const input = Math.max(0, Math.trunc(inputBound))
  const output = Math.max(0, Math.trunc(outputAllowance))
  // Exact in doubles while every term stays within 2^53 (the usual case): no BigInt on the hot path.
  const total = input * p.input + output * p.output
  if (total <= Number.MAX_SAFE_INTEGER) return ceilMillions(total)
  return Number(
    (BigInt(input) * BigInt(p.input) + BigInt(output) * BigInt(p.output) + MILLION - 1n) / MILLION,
  )
}

/** ⌈n / 10^6⌉ for a non-negative integer n ≤ 2^53, exactly (the quotient of a float division can round). */
export function ceilMillions(n: number): number {
  let q = Math.floor(n / 1_000_000)
  let rem = n - q * 1_000_000
  if (rem < 0) {
    q -= 1
    rem += 1_000_000
  } else if (rem >= 1_000_000) {
    q += 1
    rem -= 1_000_000
  }
  return rem > 0 ? q + 1 : q
}

/** Usage as the providers report it (OpenAI's names, which every adapter maps to) → token counts. */
export function countsOfUsage(u: {
  prompt_tokens: number
  completion_tokens: number
  prompt_tokens_details?: Record<string, number>
  completion_tokens_details?: Record<string, number>
}): TokenCounts {
  return {
    input: u.prompt_tokens,
    output: u.completion_tokens,
    cachedInput: u.prompt_tokens_details?.cached_tokens ?? 0,
    cacheWrite: u.prompt_tokens_details?.cache_write_tokens ?? 0,
    reasoning: u.completion_tokens_details?.reasoning_tokens ?? 0,
  }
}

/** Micro-dollars as USD text for messages and `/v1/usage`: at least 2 decimals, no float noise. */
export function formatUsd(micros: number): string {
  const sign = micros < 0 ? '-' : ''
  const abs = Math.abs(Math.trunc(micros))
  const whole = Math.floor(abs / 1_000_000)
  const frac = String(abs % 1_000_000)
    .padStart(6, '0')
    .replace(/0+$/, '')
    .padEnd(2, '0')
  return `${sign}$${whole}.${frac}`
}

/** Micro-dollars as a JSON number of USD (`spent_usd`), exact to the micro-dollar. */
export const microsToUsd = (micros: number): number => Number(formatUsd(micros).replace('$', ''))

const min = (a: bigint, b: bigint) => (a < b ? a : b)
/** Math.max for bigint (Math.max refuses them). */
export const max = (a: bigint, b: bigint) => (a > b ? a : b)
