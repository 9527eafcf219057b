/**
 * What the client is told when no attempt answers (DESIGN §10): the last upstream failure, mapped
 * alike whatever the provider's wire — an openai and an anthropic model with no fallback, through
 * the real gateway and the fault upstream, each failing for good in its own words. The status and
 * code are the same for both; a 503 reaches Messages clients as Anthropic's 529.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Step } from '../../support/fault-upstream.ts'
import { beforeEach } from '../../support/hooks.ts'
import { type ResilienceBed, startResilienceBed } from '../../support/resilience-bed.ts'

let bed: ResilienceBed
beforeAll(async () => {
  bed = await startResilienceBed()
})
afterAll(() => bed.stop())
beforeEach(() => bed.reset())

/** Models with no fallback: `prime/gpt-solo` (openai wire), `claude/claude-q` (anthropic wire). */
const SOLO = {
  openai: { id: 'prime/gpt-solo', name: 'gpt-solo' },
  anthropic: { id: 'claude/claude-q', name: 'claude-q' },
}

interface Row {
  fault: Step
  status: number
  code: string
  /** The Messages surface's error type and status for the same failure. */
  messages: [number, string]
  /** Whether the answer says when to retry (`retry-after`). */
  retryAfter?: boolean
}

const ROWS: Row[] = [
  { fault: 'server_error', status: 502, code: 'upstream_error', messages: [502, 'api_error'] },
  // OpenAI says `server_error`, Anthropic `api_error`: neither says more than the 503 does.
  { fault: 'unavailable', status: 503, code: 'upstream_overloaded', messages: [529, 'overloaded_error'] },
  { fault: 'overloaded', status: 503, code: 'upstream_overloaded', messages: [529, 'overloaded_error'] },
  {
    fault: { fault: 'rate_limited', retryAfter: '30' },
    status: 429,
    code: 'upstream_rate_limited',
    messages: [429, 'rate_limit_error'],
    retryAfter: true,
  },
  // The operator's account is out of money (OpenAI: 429 insufficient_quota on every key of the
  // pool; Anthropic: 402 billing_error): not a rate limit the client could wait out.
  { fault: 'quota', status: 502, code: 'upstream_billing_error', messages: [502, 'api_error'] },
]

describe('the last failure, alike at every provider', () => {
  for (const row of ROWS) {
    const name =
      typeof row.fault === 'string' ? row.fault : `${row.fault.fault} (retry-after ${row.fault.retryAfter})`
    test(`${name} for good → ${row.status} ${row.code} (Messages: ${row.messages.join(' ')})`, async () => {
      const seen: Record<string, unknown> = {}
      for (const [kind, model] of Object.entries(SOLO)) {
        bed.reset()
        bed.up.script({ model: model.name }, row.fault)
        const chat = await bed.post('chat', model.id)
        const body = (await chat.json()) as any
        // Its retries opened the model's circuit (3 failures): the next request would be skipped.
        bed.reset()
        bed.up.script({ model: model.name }, row.fault)
        const messages = await bed.post('messages', model.id)
        const mbody = (await messages.json()) as any
        seen[kind] = {
          chat: [chat.status, body.error.code],
          messages: [messages.status, mbody.error.type],
          retryAfter: [chat.headers.has('retry-after'), messages.headers.has('retry-after')],
        }
      }
      const retryAfter = row.retryAfter ?? false
      const want = {
        chat: [row.status, row.code],
        messages: row.messages,
        retryAfter: [retryAfter, retryAfter],
      }
      expect(seen).toEqual({ openai: want, anthropic: want })
    })
  }
})
