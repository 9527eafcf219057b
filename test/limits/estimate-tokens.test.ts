/**
 * The input bound of a whole request (src/limits/estimate-tokens.ts): at least what the provider
 * reported for each reported body of the corpus, for that provider's family; OpenAI's framing
 * (3 per message, 1 per name, 3 to prime); the allowances for what the text cannot show; the
 * largest family of the models that may answer; odd and hostile shapes.
 */
import { describe, expect, test } from 'bun:test'
import {
  FILE_TOKENS,
  IMAGE_TOKENS,
  type InputTarget,
  inputTokenBound,
  SERVER_TOOL_TOKENS,
  TEMPLATE_TOKENS,
  TOOL_PROMPT_TOKENS,
} from '../../src/limits/estimate-tokens.ts'
import { textTokenBound } from '../../src/limits/text-bound.ts'
import { reportedSamples } from '../support/token-corpus.ts'

const GPT4O: InputTarget[] = [{ kind: 'openai', model: 'gpt-4o' }]
const ANY: InputTarget[] = [{ kind: 'openai', model: 'm' }]
const bound = async (body: unknown, targets = ANY) => (await inputTokenBound(body, targets)).tokens
const chat = (extra: Record<string, unknown>, content: unknown = 'hi') => ({
  model: 'p/m',
  messages: [{ role: 'user', content }],
  ...extra,
})

describe('at least what the provider reported, for its family', () => {
  for (const s of reportedSamples()) {
    test(`${s.name}: ≥ ${s.tokens}`, async () => {
      const body = JSON.parse(s.body) as { model: string }
      const model = body.model.slice(body.model.indexOf('/') + 1)
      const targets: InputTarget[] = [{ kind: s.provider, model }]
      const b = await bound(body, targets)
      expect(b).toBeGreaterThanOrEqual(s.tokens)
      // Tight: OpenAI's (GPT-4 on cl100k, the calculator step on o200k) within 2× (legacy
      // `functions` as their JSON, which OpenAI renders more tersely); Anthropic's within 2.5× plus
      // the hidden tool prompt allowed for.
      expect(b).toBeLessThanOrEqual(
        s.provider === 'openai' ? 2 * s.tokens : 2.5 * s.tokens + TOOL_PROMPT_TOKENS,
      )
    })
  }
})

describe("OpenAI's framing on its own models", () => {
  test('3 per message, 1 per name, 3 to prime the reply; the text counted exactly', async () => {
    const one = await bound(
      { model: 'p/gpt-4o', messages: [{ role: 'user', content: 'hello world' }] },
      GPT4O,
    )
    // user, \n, hello, ␠world + 3 + 3
    expect(one).toBe(4 + 3 + 3)
    const named = await bound(
      { model: 'p/gpt-4o', messages: [{ role: 'user', name: 'ann', content: 'hello world' }] },
      GPT4O,
    )
    expect(named).toBe(one + 1 + 2)
  })

  test("cl100k models (GPT-4, 3.5): the same framing, on the cl100k bound; OpenAI's embedding models: none", async () => {
    const gpt4: InputTarget[] = [{ kind: 'openai', model: 'gpt-4' }]
    const one = await inputTokenBound(
      { model: 'p/gpt-4', messages: [{ role: 'user', content: 'hello world' }] },
      gpt4,
    )
    expect(one.family).toBe('cl100k')
    expect(one.tokens).toBe(textTokenBound('user\nhello world', 'openai', 'gpt-4') + 3 + 3)
    const text = 'the quick brown fox jumps over the lazy dog '.repeat(10)
    const embedding: InputTarget[] = [{ kind: 'openai', model: 'text-embedding-3-small' }]
    const each = textTokenBound(text, 'openai', 'text-embedding-3-small')
    expect(await bound({ input: text }, embedding)).toBe(each)
    expect(await bound({ input: [text, text] }, embedding)).toBe(2 * each)
    // 91 tokens billed (cl100k): 99 reserved, where the `any` bound and its template took 122.
    expect(each).toBeLessThanOrEqual(1.1 * 91)
  })

  test('elsewhere a template of TEMPLATE_TOKENS per message and once for the reply', async () => {
    const b = await bound({ model: 'p/m', messages: [{ role: 'user', content: 'hi' }] })
    expect(b).toBe(textTokenBound('user\nhi', 'demo') + 2 * TEMPLATE_TOKENS)
  })

  test('the largest bound of the models that may answer (a Claude fallback of a GPT-4o primary)', async () => {
    const body = chat({}, 'Привет, как дела? '.repeat(200))
    const gpt = await inputTokenBound(body, GPT4O)
    const both = await inputTokenBound(body, [...GPT4O, { kind: 'anthropic', model: 'claude-sonnet-4-5' }])
    expect(both.family).toBe('claude')
    expect(both.tokens).toBeGreaterThan(1.5 * gpt.tokens)
  })

  test('an embeddings input: strings without a template, token ids a token each', async () => {
    const ids = await bound({
      model: 'p/e',
      input: [
        [1, 2, 3],
        [4, 5],
      ],
    })
    expect(ids).toBe(5 + TEMPLATE_TOKENS)
  })
})

describe('what the text cannot show is allowed for', () => {
  test('each image part on every surface, its URL or base64 not counted as text', async () => {
    const parts = [
      { type: 'image_url', image_url: { url: `data:image/png;base64,${'A'.repeat(100_000)}` } },
      { type: 'image', source: { type: 'url', url: 'https://example.invalid/b.png' } },
      { type: 'input_image', image_url: 'https://example.invalid/c.png' },
    ]
    const b = await inputTokenBound(chat({}, parts), ANY)
    expect(b.images).toBe(3)
    expect(b.tokens).toBeLessThan(3 * IMAGE_TOKENS + 100)
    expect(b.tokens).toBeGreaterThan(3 * IMAGE_TOKENS)
  })

  test('images inside tool results are found too (any depth)', async () => {
    const body = {
      model: 'p/m',
      messages: [
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 't',
              content: [{ type: 'image', source: { type: 'base64' } }],
            },
          ],
        },
      ],
    }
    expect((await inputTokenBound(body, ANY)).images).toBe(1)
  })

  test('files and documents', async () => {
    const b = await inputTokenBound(
      chat({}, [
        { type: 'file', file: { file_id: 'f' } },
        { type: 'document', source: { type: 'url', url: 'https://example.invalid/x.pdf' } },
        { type: 'input_file', file_id: 'g' },
      ]),
      ANY,
    )
    expect(b.files).toBe(3)
    expect(b.tokens).toBeGreaterThan(3 * FILE_TOKENS)
  })

  test('client tools add the hidden tool-use prompt once; provider-run tools add their own', async () => {
    const tools = [
      { type: 'function', function: { name: 'a', parameters: { type: 'object' } } },
      { name: 'b', input_schema: { type: 'object' } },
      { type: 'web_search_20250305', name: 'web_search' },
      { type: 'computer_20250124', name: 'computer', display_width_px: 1024, display_height_px: 768 },
    ]
    const b = await inputTokenBound(chat({ tools }), ANY)
    expect(b).toMatchObject({ toolPrompt: true, serverTools: 2 })
    const plain = await bound(chat({}))
    expect(b.tokens).toBeGreaterThan(plain + TOOL_PROMPT_TOKENS + 2 * SERVER_TOOL_TOKENS)
  })

  test('legacy functions and JSON-schema outputs on each surface add the hidden prompt', async () => {
    const plain = await bound(chat({}))
    for (const extra of [
      { functions: [{ name: 'f', parameters: { type: 'object' } }] },
      { response_format: { type: 'json_schema', json_schema: { name: 's', schema: {} } } },
      { text: { format: { type: 'json_schema', name: 's', schema: {} } } },
      { output_format: { type: 'json_schema', schema: {} } },
      { output_config: { format: { type: 'json_schema', schema: {} } } },
    ]) {
      expect(await bound(chat(extra))).toBeGreaterThan(plain + TOOL_PROMPT_TOKENS)
    }
    expect((await inputTokenBound(chat({ response_format: { type: 'json_object' } }), ANY)).toolPrompt).toBe(
      false,
    )
  })

  test('odd shapes do not throw: a non-object body, null tools, tools that are not objects', async () => {
    expect(await bound('text')).toBe(TEMPLATE_TOKENS)
    expect(await bound(null)).toBe(TEMPLATE_TOKENS)
    expect((await inputTokenBound({ tools: [null, 3, 'x'] }, ANY)).serverTools).toBe(0)
    expect(await bound({ tools: null, messages: [null, [[]]] })).toBeGreaterThan(0)
    expect(await bound({ messages: [] }, [])).toBe(TEMPLATE_TOKENS)
  })

  test('a hostile body is walked once per node: 100 levels of nesting, 50k empty objects', async () => {
    let deep: unknown = {}
    for (let i = 0; i < 100; i++) deep = [deep]
    expect(await bound({ messages: deep })).toBeGreaterThan(0)
    const wide = { messages: [{ role: 'user', content: Array.from({ length: 50_000 }, () => ({})) }] }
    expect(await bound(wide)).toBeLessThan(100)
  })
})

describe('the hot path (issue 46: the governed request’s input count)', () => {
  test('a request of short texts is counted synchronously: no promise, no turn', async () => {
    const body = chat({ max_tokens: 64 }, 'Say hello to the benchmark in twenty words.')
    const b = inputTokenBound(body, GPT4O)
    expect(b instanceof Promise).toBe(false)
    expect(b).toEqual(await inputTokenBound(structuredClone(body), GPT4O))
  })

  test("a process's first count is synchronous too: o200k's table is read then, not loaded apart", () => {
    // A fresh process: in this one, earlier tests have counted already.
    const module = new URL('../../src/limits/estimate-tokens.ts', import.meta.url).pathname
    const code = `const { inputTokenBound } = await import(${JSON.stringify(module)})
const b = inputTokenBound(${JSON.stringify(chat({}, 'Say hello.'))}, ${JSON.stringify(GPT4O)})
console.log(b instanceof Promise ? 'a promise' : b.tokens)`
    const out = Bun.spawnSync([process.execPath, '-e', code])
    expect(out.stdout.toString().trim()).toMatch(/^\d+$/)
  })

  test('a message of strings only reads as the walk reads it (its members last first)', async () => {
    for (const targets of [
      GPT4O,
      ANY,
      [{ kind: 'anthropic', model: 'claude-sonnet-4-5' }] as InputTarget[],
    ]) {
      const flat = { role: 'user', name: 'bob', content: 'hello there, how are you today?', refusal: null }
      // An empty list member sends the same message through the walk: the same text, no more.
      const walked = { ...flat, extra: [] }
      const a = await inputTokenBound({ messages: [flat, { role: 'assistant', content: 'fine' }] }, targets)
      const b = await inputTokenBound({ messages: [walked, { role: 'assistant', content: 'fine' }] }, targets)
      expect(a).toEqual(b)
      expect(a.tokens).toBe(
        (await inputTokenBound({ messages: [{ parts: [[['fine', 'assistant']]] }, walked] }, targets)).tokens,
      )
    }
  })
})
