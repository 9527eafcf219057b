/**
 * @module
 * The mock upstream's embeddings answer (`POST /v1/embeddings`), shaped as OpenAI's: a list of
 * `count` vectors of `dims` fixed values, `float` numbers or `base64` of little-endian float32, and
 * usage. Built once per shape and reused (the benchmark measures the gateway against this baseline).
 */

/** One answer body; every vector is the same unit vector (the bench measures bytes, not meaning). */
export function buildEmbeddingsJson(model: string, count: number, dims: number, base64: boolean): string {
  const value = 1 / Math.sqrt(dims)
  const vector = new Array<number>(dims).fill(Math.fround(value))
  let embedding: string
  if (base64) {
    const bytes = new Uint8Array(dims * 4)
    const view = new DataView(bytes.buffer)
    for (let i = 0; i < dims; i++) view.setFloat32(i * 4, vector[i]!, true)
    embedding = `"${Buffer.from(bytes).toString('base64')}"`
  } else embedding = `[${vector.join(',')}]`
  const data = Array.from(
    { length: count },
    (_, i) => `{"object":"embedding","index":${i},"embedding":${embedding}}`,
  )
  const tokens = count * 8
  return (
    `{"object":"list","data":[${data.join(',')}],"model":${JSON.stringify(model)},` +
    `"usage":{"prompt_tokens":${tokens},"total_tokens":${tokens}}}`
  )
}
