/**
 * A chat stream continued on another target is still one answer (DESIGN §10: "the client's stream
 * goes on seamlessly"): every chunk keeps the `id`, `created` and `system_fingerprint` the stream
 * started with, so the openai SDK's accumulated completion is the one it began reading. Here an
 * OpenAI model stalls after two words and an Anthropic model (prefill) finishes the answer: its
 * translated chunks bear ids and times of their own.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { answerPieces } from '../../support/fault-upstream.ts'
import { beforeEach } from '../../support/hooks.ts'
import {
  CLAUDE_KEY,
  FAST,
  type ResilienceBed,
  startResilienceBed,
  TIGHT,
} from '../../support/resilience-bed.ts'

const model = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  context_window: 128_000,
  max_output_tokens: 4096,
  features: ['streaming', 'system_messages'],
  ...extra,
})

let bed: ResilienceBed
beforeAll(async () => {
  bed = await startResilienceBed({
    words: 8,
    providers: (url) => [
      {
        prefix: 'oa',
        kind: 'openai',
        base_url: `${url}/v1`,
        api_key: 'sk-oa-0001',
        ...FAST,
        timeouts: TIGHT,
        models: [model('midstall', { fallbacks: ['an/claude-q'] })],
      },
      {
        prefix: 'an',
        kind: 'anthropic',
        base_url: url,
        api_key: CLAUDE_KEY,
        ...FAST,
        models: [model('claude-q', { features: ['streaming', 'system_messages', 'prefill'] })],
      },
    ],
  })
})
afterAll(() => bed.stop())
beforeEach(() => bed.reset())

test('chunks keep the first part’s id, created and system_fingerprint after the switch', async () => {
  bed.up.script({ model: 'midstall' }, { fault: 'stall', after: 2 })
  const res = await bed.post('chat', 'oa/midstall', { stream: true, includeUsage: true })
  expect(res.status).toBe(200)
  const chunks = (await res.text())
    .split('\n\n')
    .filter((e) => e.startsWith('data: {'))
    .map((e) => JSON.parse(e.slice(6)))
  expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe(answerPieces(8).join(''))
  expect(bed.up.attempts().map((a) => a.model)).toEqual(['midstall', 'claude-q'])
  expect(new Set(chunks.map((c) => c.id))).toEqual(new Set(['chatcmpl-fault']))
  expect(new Set(chunks.map((c) => c.created))).toEqual(new Set([1_750_000_000]))
  expect(new Set(chunks.map((c) => c.system_fingerprint))).toEqual(new Set(['fp_fault']))
})

test('the openai SDK’s finalChatCompletion() is the stream it began reading', async () => {
  bed.up.script({ model: 'midstall' }, { fault: 'stall', after: 2 })
  const client = new OpenAI({ baseURL: `${bed.gw.url}/v1`, apiKey: bed.key, maxRetries: 0 })
  const done = await client.chat.completions
    .stream({ model: 'oa/midstall', messages: [{ role: 'user', content: 'count for me' }] })
    .finalChatCompletion()
  expect(done.id).toBe('chatcmpl-fault')
  expect(done.created).toBe(1_750_000_000)
  expect(done.choices[0]!.message.content).toBe(answerPieces(8).join(''))
})
