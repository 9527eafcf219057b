/**
 * @module
 * Generated text counted as it arrives (DESIGN §11): an upper bound of the output tokens a
 * provider bills for it, per provider kind, cheap enough to run on every chunk of a stream under
 * a token or money limit (and never on a stream without one).
 *
 * For now: o200k (limits/o200k.ts) for kind `openai` — the encoding OpenAI's current models bill
 * — and one token per UTF-8 byte elsewhere (a token covers at least one byte on every tokenizer
 * behind the gateway, limits/estimate-tokens.ts). The calibrated per-kind bound
 * (`textTokenBound`, limits/estimate-tokens.ts) replaces the body of this function when it lands;
 * every call site goes through it.
 *
 * Chunks are counted one at a time and summed: byte-pair merges never cross a chunk's edge in
 * that sum, so it is never below the count of the whole text in practice (one token per
 * fragment at worst), which is the direction an upper bound may err in.
 */
import type { ProviderKind } from '../config/index.ts'
import { type O200kCounter, o200kCounter } from './o200k.ts'

let o200k: O200kCounter | null = null
let loading: Promise<void> | null = null

/**
 * Starts loading the o200k tables (megabytes: only when a limit applies). Until they are loaded
 * an `openai` text counts its bytes, which is never fewer tokens.
 */
export function prepareOutputCount(): Promise<void> {
  loading ??= o200kCounter().then((c) => {
    o200k = c
  })
  return loading
}

/** Output tokens `text` may cost on a provider of `kind`, never fewer than it bills. */
export function outputTokenCount(text: string, kind: ProviderKind): number {
  if (text === '') return 0
  if (kind === 'openai' && o200k !== null) return o200k(text).tokens
  return Buffer.byteLength(text)
}
