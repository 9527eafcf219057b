/**
 * The fuzz corpora's generators work for any seed: no step picks from an empty body, and no
 * body shares (and so mutates, or nests into a cycle) a value with another. The seeds below broke
 * them before: an embeddings body with every member removed, a Responses body holding a shared
 * array inside itself. Responses bodies are 2,000 a seed (a quarter of the 8,000 first used: with
 * the shared value put back, each seed fails within its first 500, stop 59); embedding bodies stay
 * at 8,000 (with the emptied-body pick put back, seed 12 fails within 1,000, 13 within 4,000, 11
 * only past 4,000).
 */
import { expect, test } from 'bun:test'
import { generateMalformedEmbeddingBodies } from './malformed-embedding-bodies.ts'
import { generateMalformedResponses } from './malformed-responses.ts'

for (const seed of [11, 12, 13]) {
  test(`Responses bodies, seed ${seed}: 2,000 generated, each its own`, () => {
    const bodies = generateMalformedResponses(seed, 2000, 'demo/echo')
    expect(bodies).toHaveLength(2000)
    // Generated again one by one from the same stream: a value shared between bodies and
    // mutated later would make the first run's early bodies differ from the texts sent.
    expect(generateMalformedResponses(seed, 2000, 'demo/echo')).toEqual(bodies)
  })
  test(`embedding bodies, seed ${seed}: 8,000 generated`, () => {
    expect(generateMalformedEmbeddingBodies(seed, 8000, ['demo/embed'])).toHaveLength(8000)
  })
}
