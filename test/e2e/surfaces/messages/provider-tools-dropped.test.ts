/**
 * Provider-run tools on a model whose upstream cannot run them (DESIGN §6): the model entry's
 * `unsupported_tools` decides on every surface — `reject` (the default) refuses with 400 naming
 * `tools[i]`; `drop` leaves them out and names them in `x-switchyard-dropped-tools`. Here
 * Anthropic's server tools on `/v1/messages` and `/v1/messages/count_tokens` (which counts what
 * is sent) and Google's built-ins on the Gemini surface, to an OpenAI-compatible upstream
 * (`oa/drop` drops, `oa/gpt-4o-mini` rejects).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTranslationBed, type TranslationBed } from '../../../support/translation-bed.ts'

let bed: TranslationBed
let key: string
beforeAll(async () => {
  bed = await startTranslationBed()
  key = (await bed.gw.key('provider-tools', 'unlimited')).key
})
afterAll(() => bed.stop())

const SEARCH = { type: 'web_search_20250305', name: 'web_search', max_uses: 2 }
const WEATHER = {
  name: 'get_weather',
  description: 'Weather',
  input_schema: { type: 'object', properties: { city: { type: 'string' } } },
}
const WEATHER_FN = {
  type: 'function',
  function: { name: 'get_weather', description: 'Weather', parameters: WEATHER.input_schema },
}

const post = (path: string, body: unknown) =>
  fetch(`${bed.gw.url}${path}`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify(body),
  })

describe('Messages: Anthropic server tools to an openai upstream', () => {
  test('drop: left out, the client tool sent, named in x-switchyard-dropped-tools (JSON and stream)', async () => {
    for (const stream of [false, true]) {
      const { body, headers } = await bed.exchange('oa', 'messages', 'oa/drop', {
        tools: [SEARCH, WEATHER],
        stream,
      })
      expect(body.tools).toEqual([WEATHER_FN])
      expect(headers.get('x-switchyard-dropped-tools')).toBe('web_search_20250305')
    }
    // Only server tools: none sent, and no tool_choice without tools.
    const { body } = await bed.exchange('oa', 'messages', 'oa/drop', {
      tools: [SEARCH],
      tool_choice: { type: 'auto' },
    })
    expect(body.tools).toBeUndefined()
    expect(body.tool_choice).toBeUndefined()
  })

  test('drop: a tool_choice that makes the model call a dropped tool is refused by name', async () => {
    await bed.refused(
      'messages',
      'oa/drop',
      { tools: [SEARCH, WEATHER], tool_choice: { type: 'tool', name: 'web_search' } },
      'tool_choice',
    )
    await bed.refused('messages', 'oa/drop', { tools: [SEARCH], tool_choice: { type: 'any' } }, 'tool_choice')
  })

  test('reject (the default): 400 naming tools[i], nothing sent', async () => {
    await bed.refused('messages', 'oa/gpt-4o-mini', { tools: [WEATHER, SEARCH] }, 'tools[1]')
  })

  test('count_tokens counts what is sent: a dropped tool adds nothing; reject refuses it', async () => {
    const count = async (model: string, tools: unknown[]) => {
      const res = await post('/v1/messages/count_tokens', {
        model,
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
        tools,
      })
      return { status: res.status, body: (await res.json()) as any }
    }
    const without = await count('oa/drop', [WEATHER])
    expect(without.status).toBe(200)
    expect(await count('oa/drop', [SEARCH, WEATHER])).toEqual(without)
    const refused = await count('oa/gpt-4o-mini', [SEARCH, WEATHER])
    expect(refused.status).toBe(400)
    expect(refused.body.error.message).toContain('tools[0]')
  })
})

describe('a dropped tool is not charged (a 1,500-token minute, below its 2,000-token hold)', () => {
  let tight: string
  beforeAll(async () => {
    tight = (await bed.gw.key('provider-tools-tight', 'tight')).key
  })
  const ask = async (path: string, body: unknown) => {
    const res = await fetch(`${bed.gw.url}${path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tight}`,
        'content-type': 'application/json',
        'anthropic-version': '2023-06-01',
      },
      body: JSON.stringify(body),
    })
    return {
      status: res.status,
      text: await res.text(),
      dropped: res.headers.get('x-switchyard-dropped-tools'),
    }
  }
  const messages = (model: string, tools?: unknown[]) =>
    ask('/v1/messages', { model, max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }], tools })
  const responses = (model: string, tools?: unknown[]) =>
    ask('/v1/responses', { model, max_output_tokens: 50, input: 'Hi', tools })

  test('Messages: a server tool every route drops fits as the request without it does', async () => {
    expect((await messages('oa/drop')).status).toBe(200)
    const dropped = await messages('oa/drop', [SEARCH])
    expect(`${dropped.status} ${dropped.text}`).toStartWith('200 ')
    expect(dropped.dropped).toBe('web_search_20250305')
    // A route that runs it keeps the charge.
    expect((await messages('an/text', [SEARCH])).status).toBe(429)
  })

  test('Responses: a hosted tool every route drops fits as the request without it does', async () => {
    expect((await responses('oa/drop')).status).toBe(200)
    const dropped = await responses('oa/drop', [{ type: 'web_search' }])
    expect(`${dropped.status} ${dropped.text}`).toStartWith('200 ')
    expect(dropped.dropped).toBe('web_search')
    expect((await responses('oair/text', [{ type: 'web_search' }])).status).toBe(429)
  })

  test('Responses: a namespace of function tools is function tools, not a provider-run tool held on every route', async () => {
    const fn = { type: 'function', name: 'spawn', parameters: { type: 'object', properties: {} } }
    const group = { type: 'namespace', name: 'agents', description: 'Agents', tools: [fn] }
    for (const model of ['oa/gpt-4o-mini', 'oair/text']) {
      const res = await responses(model, [group])
      expect(`${model} ${res.status} ${res.text}`).toStartWith(`${model} 200 `)
    }
    // A hosted tool inside one is held where a route runs it.
    expect((await responses('oair/text', [{ ...group, tools: [fn, { type: 'web_search' }] }])).status).toBe(
      429,
    )
  })
})

describe("Gemini: Google's built-in tools to an openai upstream", () => {
  const gemini = (model: string, method: string, tools: unknown[]) => {
    const request = { contents: [{ role: 'user', parts: [{ text: 'Weather in Paris?' }] }], tools }
    return fetch(`${bed.gw.url}/v1beta/models/${model}:${method}`, {
      method: 'POST',
      headers: { 'x-goog-api-key': key, 'content-type': 'application/json' },
      // countTokens reads the tools of a whole generateContentRequest.
      body: JSON.stringify(method === 'countTokens' ? { generateContentRequest: request } : request),
    })
  }
  const declared = {
    functionDeclarations: [{ name: 'get_weather', description: 'Weather', parameters: WEATHER.input_schema }],
  }

  test('drop: left out, the function sent, named in x-switchyard-dropped-tools', async () => {
    const before = bed.count('oa')
    const res = await gemini('oa/drop', 'generateContent', [{ googleSearch: {} }, declared])
    expect(`${res.status} ${await res.text()}`).toStartWith('200 ')
    expect(bed.count('oa')).toBe(before + 1)
    expect((bed.mock.stats.lastBody as any).tools).toEqual([WEATHER_FN])
    expect(res.headers.get('x-switchyard-dropped-tools')).toBe('googleSearch')
  })

  test('drop: mode ANY when every tool was a dropped built-in is refused naming the mode, nothing sent', async () => {
    const before = bed.count('oa')
    const res = await fetch(`${bed.gw.url}/v1beta/models/oa/drop:generateContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({
        contents: [{ role: 'user', parts: [{ text: 'Weather in Paris?' }] }],
        tools: [{ googleSearch: {} }],
        toolConfig: { functionCallingConfig: { mode: 'ANY' } },
      }),
    })
    const body = (await res.json()) as any
    expect(res.status).toBe(400)
    expect(body.error.message).toContain('toolConfig.functionCallingConfig.mode')
    expect(body.error.message).toContain('googleSearch')
    expect(bed.count('oa')).toBe(before)
  })

  test('reject (the default): 400 naming tools[i].googleSearch, nothing sent', async () => {
    const before = bed.count('oa')
    const res = await gemini('oa/gpt-4o-mini', 'generateContent', [declared, { googleSearch: {} }])
    const body = (await res.json()) as any
    expect(res.status).toBe(400)
    expect(body.error.message).toContain('tools[1].googleSearch')
    expect(bed.count('oa')).toBe(before)
  })

  test('countTokens counts what is sent: a dropped built-in adds nothing', async () => {
    const count = async (tools: unknown[]) => {
      const res = await gemini('oa/drop', 'countTokens', tools)
      expect(res.status).toBe(200)
      return ((await res.json()) as any).totalTokens
    }
    expect(await count([{ googleSearch: {} }, declared])).toBe(await count([declared]))
    const refused = await gemini('oa/gpt-4o-mini', 'countTokens', [{ googleSearch: {} }])
    expect(refused.status).toBe(400)
  })
})
