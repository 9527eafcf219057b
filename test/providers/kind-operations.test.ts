/**
 * What the config loader believes about each kind (`config/kind-operations.ts`) is what its
 * adapter offers: a kind that may hold embedding models has the embeddings calls or the
 * embeddings surface's pass-through; a kind declared without embeddings has neither.
 */
import { describe, expect, test } from 'bun:test'
import { KIND_OPERATIONS } from '../../src/config/kind-operations.ts'
import type { ProviderConfig } from '../../src/config/schema.ts'
import { PROVIDER_KINDS } from '../../src/config/schema-providers.ts'
import { createAdapters } from '../../src/providers/index.ts'
import { embeddingsSurface } from '../../src/surfaces/embeddings/index.ts'

describe('each kind serves the operations the config loader lets it hold', () => {
  for (const kind of PROVIDER_KINDS) {
    test(kind, () => {
      const provider = { prefix: 'p', kind, base_url: 'http://127.0.0.1:9', api_key: 'k', models: [] }
      const adapter = createAdapters([provider as unknown as ProviderConfig]).get('p')!
      const passThrough = embeddingsSurface.forward.kind === kind && adapter.forward !== undefined
      const serves = adapter.embeddings !== undefined || passThrough
      expect(serves).toBe(KIND_OPERATIONS[kind].embeddings === undefined)
      // Every kind answers chat; count_tokens is answered by the gateway where no upstream counts.
      expect(KIND_OPERATIONS[kind].chat).toBeUndefined()
      expect(KIND_OPERATIONS[kind].count_tokens).toBeUndefined()
    })
  }
})
