/**
 * @module
 * A plan's `max_context_tokens` (DESIGN §11). The admission bound (estimate-tokens.ts) counts a
 * byte as a token, which is safe for reserving but three to four times what a tokenizer counts on
 * English: refusing on it would cap a plan's context at a quarter of what it says. So a request
 * whose bound is over the cap is counted with o200k (GPT-4o's encoding) over its whole body text —
 * the JSON around the content only adds tokens — and refused only if that count is over too.
 * Counted by o200k.ts (in slices: a run without spaces is superlinear whole), stopping past the cap.
 */
import { o200kCounter } from './o200k.ts'

/** The body's o200k count when it is over `cap`, else null (counting stops past it). */
export async function overContext(bodyText: string, cap: number): Promise<number | null> {
  const { tokens } = (await o200kCounter())(bodyText, cap)
  return tokens > cap ? tokens : null
}
