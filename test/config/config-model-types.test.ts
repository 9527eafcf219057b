import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { STARTER_CONFIG } from '../../src/cli/init.ts'
import { ConfigError, loadConfigFile, parseConfig } from '../../src/config/index.ts'
import { REPO } from '../support/cli.ts'
import { testConfigDoc } from '../support/gateway.ts'

function problems(fn: () => unknown): Array<{ path: string; message: string }> {
  try {
    fn()
  } catch (e) {
    if (e instanceof ConfigError) return e.problems
    throw e
  }
  throw new Error('expected a ConfigError')
}

const EMBED = { name: 'embed', type: 'embedding', context_window: 8192, dimensions: 256, tier: 'free' }

function withModels(kind: string, models: unknown[]): Record<string, unknown> {
  const doc = testConfigDoc()
  ;(doc.providers as any).push({ prefix: 'p', kind, api_key: 'k', models })
  return doc
}

describe('model type (chat | embedding)', () => {
  test('a model is a chat model unless it says otherwise; an embedding model needs no output or features', () => {
    const config = parseConfig(withModels('demo', [EMBED]))
    const echo = config.providers[0]!.models[0]!
    expect(echo.type).toBeUndefined()
    const embed = config.providers[1]!.models[0]!
    expect(embed).toMatchObject({ type: 'embedding', dimensions: 256, max_output_tokens: 0, features: [] })
  })

  test('fallbacks keep the type: an embedding model falls back to embedding models only, and back', () => {
    const found = problems(() =>
      parseConfig(
        withModels('demo', [
          { ...EMBED, fallbacks: ['demo/echo', 'p/embed2'] },
          { ...EMBED, name: 'embed2' },
          {
            name: 'chat',
            context_window: 8192,
            max_output_tokens: 64,
            features: [],
            fallbacks: ['p/embed2'],
          },
        ]),
      ),
    )
    expect(found).toEqual([
      {
        path: '/providers/1/models/0/fallbacks/0',
        message: "'demo/echo' is a chat model; an embedding model falls back to embedding models only",
      },
      {
        path: '/providers/1/models/2/fallbacks/0',
        message: "'p/embed2' is an embedding model; a chat model falls back to chat models only",
      },
    ])
  })

  test('an embedding fallback makes vectors of the same declared dimensions, or the config is refused', () => {
    // A fallback that answered 768 values where the model gives 256 would change the vectors a
    // client stores mid-stream (a vector database refuses them, or mixes two spaces).
    const found = problems(() =>
      parseConfig(
        withModels('demo', [
          { ...EMBED, fallbacks: ['p/wide', 'p/same', 'p/undeclared'] },
          { ...EMBED, name: 'wide', dimensions: 768 },
          { ...EMBED, name: 'same' },
          { name: 'undeclared', type: 'embedding', context_window: 8192 },
          { name: 'bare', type: 'embedding', context_window: 8192, fallbacks: ['p/same'] },
        ]),
      ),
    )
    expect(found).toEqual([
      {
        path: '/providers/1/models/0/fallbacks/0',
        message:
          "'p/wide' makes vectors of 768 dimensions, this model 256: an embedding model's fallbacks must make vectors of its own length (declare the same dimensions)",
      },
      {
        path: '/providers/1/models/0/fallbacks/2',
        message:
          "'p/undeclared' declares no dimensions: an embedding model with fallbacks and each of its fallbacks declare dimensions, the same for all",
      },
      {
        path: '/providers/1/models/4/fallbacks/0',
        message:
          'this model declares no dimensions: an embedding model with fallbacks and each of its fallbacks declare dimensions, the same for all',
      },
    ])
    // The same length everywhere: accepted.
    expect(() =>
      parseConfig(
        withModels('demo', [
          { ...EMBED, fallbacks: ['p/same'] },
          { ...EMBED, name: 'same' },
        ]),
      ),
    ).not.toThrow()
  })

  test('anthropic has no embeddings: an embedding model under it is a config error that says so', () => {
    const found = problems(() => parseConfig(withModels('anthropic', [EMBED])))
    expect(found).toHaveLength(1)
    expect(found[0]!.path).toBe('/providers/1/models/0/type')
    expect(found[0]!.message).toContain('Anthropic has no embeddings API')
  })

  test('openai, gemini and demo providers take embedding models', () => {
    for (const kind of ['openai', 'gemini', 'demo'])
      expect(() => parseConfig(withModels(kind, [EMBED]))).not.toThrow()
  })

  test('chat-only keys on an embedding model are errors with their path', () => {
    const found = problems(() =>
      parseConfig(
        withModels('openai', [
          { ...EMBED, max_output_tokens: 10, features: ['streaming'], temperature: { min: 0, max: 1 } },
        ]),
      ),
    )
    expect(found.map((p) => p.path)).toEqual([
      '/providers/1/models/0/max_output_tokens',
      '/providers/1/models/0/features',
      '/providers/1/models/0/temperature',
    ])
    expect(found[0]!.message).toContain('for chat models')
  })

  test('a chat model still needs max_output_tokens and features; dimensions is for embedding models', () => {
    const found = problems(() =>
      parseConfig(withModels('openai', [{ name: 'gpt', context_window: 1, dimensions: 8 }])),
    )
    expect(found.map((p) => p.path)).toEqual([
      '/providers/1/models/0/dimensions',
      '/providers/1/models/0/max_output_tokens',
      '/providers/1/models/0/features',
    ])
    expect(found[1]!.message).toContain('required for a chat model')
  })

  test('an unknown type names the path', () => {
    const found = problems(() => parseConfig(withModels('openai', [{ ...EMBED, type: 'vector' }])))
    expect(found.map((p) => p.path)).toContain('/providers/1/models/0/type')
  })

  test("the starter config (init's and switchyard.example.yaml) has demo/embed, an embedding model of the free tier", async () => {
    expect(STARTER_CONFIG).toBe(await Bun.file(join(REPO, 'switchyard.example.yaml')).text())
    const config = await loadConfigFile(join(REPO, 'switchyard.example.yaml'), {})
    const demo = config.providers.find((p) => p.prefix === 'demo')!
    const embed = demo.models.find((m) => m.name === 'embed')
    expect(embed).toMatchObject({ type: 'embedding', tier: 'free' })
    expect(embed!.dimensions).toBeGreaterThan(0)
  })
})
