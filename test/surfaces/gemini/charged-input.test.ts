/**
 * What the charge reads of a Gemini body (charged-input.ts), without a server: Google's built-in
 * tools get the provider-run tool allowance (each one, also beside function declarations in one
 * entry) while the money limit's surcharge still finds them by key; the tools and files whose
 * input bills beyond what the gateway sees are named as uncounted; a PDF by URI is a file.
 */
import { describe, expect, test } from 'bun:test'
import type { ModelConfig } from '../../../src/config/index.ts'
import {
  FILE_TOKENS,
  inputTokenBound,
  SERVER_TOOL_TOKENS,
  UNCOUNTED_INPUT,
} from '../../../src/limits/estimate-tokens.ts'
import { type Reached, surchargeOf } from '../../../src/limits/surcharge.ts'
import { chargedInput } from '../../../src/surfaces/gemini/charged-input.ts'
import type { GenerateContentRequest } from '../../../src/surfaces/gemini/request-schema.ts'

const GEMINI = [{ kind: 'gemini' as const, model: 'gemini-2.5-flash' }]
/** Google's built-ins are members the schema leaves open (`{ googleSearch: {} }`). */
type Extra = Omit<Partial<GenerateContentRequest>, 'tools'> & { tools?: object[] }
const ask = (extra: Extra = {}): GenerateContentRequest =>
  ({
    contents: [{ role: 'user', parts: [{ text: 'What is new?' }] }],
    ...extra,
  }) as GenerateContentRequest
const bound = (body: GenerateContentRequest) => inputTokenBound(chargedInput(body), GEMINI)

describe("Google's built-in tools", () => {
  test('each is a provider-run tool; function declarations are not', async () => {
    const fn = { functionDeclarations: [{ name: 'lookup' }] }
    const plain = await bound(ask({ tools: [fn] }))
    expect(plain.serverTools).toBe(0)
    const separate = await bound(ask({ tools: [fn, { googleSearch: {} }, { codeExecution: {} }] }))
    expect(separate.serverTools).toBe(2)
    expect(separate.tokens).toBeGreaterThanOrEqual(plain.tokens + 2 * SERVER_TOOL_TOKENS)
    // One entry may hold several kinds.
    const together = await bound(ask({ tools: [{ ...fn, googleSearch: {}, codeExecution: {} }] }))
    expect(together.serverTools).toBe(2)
  })

  test('the money surcharge still reads them by key from the charged body', () => {
    const reached: Reached = {
      model: { name: 'm', context_window: 1_000_000, pricing: { input: 1, output: 2 } } as ModelConfig,
      provider: { kind: 'gemini', wire: undefined } as Reached['provider'],
    }
    const charged = chargedInput(ask({ tools: [{ functionDeclarations: [] }, { googleSearch: {} }] }))
    let refused: unknown = null
    try {
      surchargeOf(charged, [reached], true)
    } catch (e) {
      refused = e
    }
    expect(refused).toMatchObject({ status: 400, param: 'tools[1].googleSearch' })
  })

  test('urlContext and fileSearch bill what they fetch as input: uncounted, named', () => {
    for (const key of ['urlContext', 'fileSearch']) {
      const charged = chargedInput(ask({ tools: [{ googleSearch: {} }, { [key]: {} }] }))
      expect(charged[UNCOUNTED_INPUT]).toBe(`tools[1].${key}`)
    }
    expect(chargedInput(ask({ tools: [{ googleSearch: {} }] }))[UNCOUNTED_INPUT]).toBeUndefined()
  })
})

describe('files by URI', () => {
  const withFile = (fileData: { mimeType?: string; fileUri: string }) =>
    ask({ contents: [{ role: 'user', parts: [{ text: 'Look' }, { fileData }] }] })
  test.each([
    ['no mimeType (a YouTube URL)', { fileUri: 'https://www.youtube.com/watch?v=9hE5-98ZeCg' }],
    ['no mimeType (any web URL)', { fileUri: 'https://example.com/cat.png' }],
    ['an image type on a video host', { mimeType: 'image/jpeg', fileUri: 'https://youtu.be/9hE5-98ZeCg' }],
    ['a text file', { mimeType: 'text/plain', fileUri: 'gs://bucket/book.txt' }],
  ])('%s: uncounted', (_, file) => {
    expect(chargedInput(withFile(file))[UNCOUNTED_INPUT]).toBe('contents[0].parts[1].fileData')
  })

  test('an image by URL is an image, a PDF a file', async () => {
    const image = withFile({ mimeType: 'image/png', fileUri: 'https://example.com/cat.png' })
    expect(chargedInput(image)[UNCOUNTED_INPUT]).toBeUndefined()
    expect((await bound(image)).images).toBe(1)
    const pdf = withFile({ mimeType: 'application/pdf', fileUri: 'https://example.com/a.pdf' })
    expect(chargedInput(pdf)[UNCOUNTED_INPUT]).toBeUndefined()
    expect((await bound(pdf)).tokens).toBeGreaterThan(FILE_TOKENS)
  })
})
