/**
 * A Chat Completions answer made only of tool calls, translated from Anthropic or Gemini, opened
 * its stream with `{role: 'assistant', content: ''}`. OpenAI opens such an answer with the role and
 * `content: null` on the chunk of the first tool call, and a text answer with `content: ''`: the AI
 * SDK reads `''` as text and recorded an empty text part beside the calls. The role now goes out
 * with the first content block, as OpenAI's does; a text answer still opens with `content: ''`.
 * The recorded Anthropic and Gemini answers, replayed by local fakes; the real AI SDK.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { startTranslationBed, type TranslationBed } from '../../../support/translation-bed.ts'

const CLIENTS = join(import.meta.dir, '../../../clients')
let bed: TranslationBed
let ai: any = null
let openaiProvider: any = null
beforeAll(async () => {
  bed = await startTranslationBed()
  try {
    ai = await import(Bun.resolveSync('ai', CLIENTS))
    openaiProvider = await import(Bun.resolveSync('@ai-sdk/openai', CLIENTS))
  } catch {
    console.log('SKIPPED (AI SDK part): ai not installed (npm install --prefix test/clients)')
  }
})
afterAll(() => bed.stop())

const TOOLS = {
  tools: [{ type: 'function', function: { name: 'json', parameters: { type: 'object', properties: {} } } }],
}

/** The `choices[0].delta`s of a chat stream, in order. */
async function deltas(modelId: string): Promise<any[]> {
  const res = await bed.post('chat', modelId, { ...TOOLS, stream: true })
  const text = await res.text()
  expect(`${res.status} ${text.slice(0, 200)}`).toStartWith('200 ')
  return text
    .split('\n\n')
    .filter((frame) => frame.startsWith('data: {'))
    .map((frame) => JSON.parse(frame.slice(6)))
    .filter((chunk) => chunk.choices.length > 0)
    .map((chunk) => chunk.choices[0].delta)
}

describe.each(['an', 'gm'])('chat → %s', (upstream) => {
  test('a tool-call answer opens with the role, content null and the first call, and no delta carries text', async () => {
    const all = await deltas(`${upstream}/tool`)
    expect(all[0]).toMatchObject({ role: 'assistant', content: null })
    expect(all[0].tool_calls[0]).toMatchObject({ index: 0, type: 'function' })
    expect(all.filter((d) => typeof d.content === 'string')).toEqual([])
    expect(all.filter((d) => d.role !== undefined)).toHaveLength(1)
  })

  test('a text answer still opens with {role, content: ""} on a chunk of its own', async () => {
    const all = await deltas(`${upstream}/text`)
    expect(all[0]).toEqual({ role: 'assistant', content: '' })
    expect(all.slice(1).some((d) => typeof d.content === 'string' && d.content !== '')).toBe(true)
  })

  test('non-stream: a tool-call answer has content null', async () => {
    const res = await bed.post('chat', `${upstream}/tool`, TOOLS)
    const body = (await res.json()) as any
    expect(res.status).toBe(200)
    expect(body.choices[0].message.content).toBeNull()
    expect(body.choices[0].message.tool_calls).toHaveLength(1)
  })

  test('the AI SDK (openai.chat, streamText) records a tool call and no empty text part', async () => {
    if (!ai) return
    const { key } = await bed.gw.key(`ai-sdk-${upstream}`, 'unlimited')
    const openai = openaiProvider.createOpenAI({ baseURL: `${bed.gw.url}/v1`, apiKey: key })
    const model = openai.chat(`${upstream}/tool`)
    const result = ai.streamText({
      model,
      prompt: 'Hi',
      maxRetries: 0,
      tools: { json: ai.tool({ inputSchema: ai.jsonSchema({ type: 'object', properties: {} }) }) },
    })
    const content = await result.content
    expect(content.filter((part: any) => part.type === 'text')).toEqual([])
    expect(content.filter((part: any) => part.type === 'tool-call')).toHaveLength(1)
  })
})
