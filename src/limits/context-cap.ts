/**
 * @module
 * A plan's `max_context_tokens` (DESIGN §11). The admission bound (estimate-tokens.ts) counts a
 * byte as a token, which is safe for reserving but three to four times what a tokenizer counts on
 * English: refusing on it would cap a plan's context at a quarter of what it says. So a request
 * whose bound is over the cap is counted with o200k (GPT-4o's encoding) over its whole body text —
 * the JSON around the content only adds tokens — and refused only if that count is over too.
 * Counted in 256-character slices: o200k is superlinear on long runs without spaces (a 128 KB run
 * of Chinese takes a minute whole, milliseconds in slices) and slicing only adds tokens.
 */

const SLICE = 256

/** The body's o200k count (in slices) when it is over `cap`, else null (counting stops past it). */
export async function overContext(bodyText: string, cap: number): Promise<number | null> {
  const { countTokens } = await import('gpt-tokenizer/encoding/o200k_base')
  let n = 0
  for (let i = 0; i < bodyText.length; i += SLICE) {
    n += countTokens(bodyText.slice(i, i + SLICE))
    if (n > cap) return n
  }
  return null
}
