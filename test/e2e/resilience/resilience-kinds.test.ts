/**
 * Every failure kind (DESIGN §10) on every surface, streamed and not, through the real gateway and
 * the fault upstream: what the client gets (status, the answering model), how many attempts the
 * upstream saw. The primary is `prime/gpt-a` (two keys; fallbacks claude/claude-b, spare/gpt-s).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Step, Wire } from '../../support/fault-upstream.ts'
import { beforeEach } from '../../support/hooks.ts'
import { readStream } from '../../support/read-stream.ts'
import { type ResilienceBed, startResilienceBed } from '../../support/resilience-bed.ts'

let bed: ResilienceBed
beforeAll(async () => {
  bed = await startResilienceBed()
})
afterAll(() => bed.stop())
beforeEach(() => bed.reset())

interface Case {
  kind: string
  steps: Step[]
  status: number
  /** Attempts the upstream sees. */
  attempts: number
  /** The model that answers (200 only). */
  model?: string
  /** The model asked: `tight/gpt-a` (prime's twin, 400 ms timeouts) where the case stalls it. */
  ask?: string
}

const CASES: Case[] = [
  {
    kind: 'transient: 500 once',
    steps: ['server_error', 'ok'],
    status: 200,
    attempts: 2,
    model: 'prime/gpt-a',
  },
  { kind: 'transient: reset once', steps: ['reset', 'ok'], status: 200, attempts: 2, model: 'prime/gpt-a' },
  {
    kind: 'rate limited: the other key at once',
    steps: [{ fault: 'rate_limited', retryAfter: '20' }, 'ok'],
    status: 200,
    attempts: 2,
    model: 'prime/gpt-a',
  },
  { kind: 'quota: the other key', steps: ['quota', 'ok'], status: 200, attempts: 2, model: 'prime/gpt-a' },
  {
    kind: 'credential 401: the other key',
    steps: ['unauthorized', 'ok'],
    status: 200,
    attempts: 2,
    model: 'prime/gpt-a',
  },
  {
    kind: 'credential 403: the other key',
    steps: ['forbidden', 'ok'],
    status: 200,
    attempts: 2,
    model: 'prime/gpt-a',
  },
  {
    kind: 'silent: fail over at once',
    steps: ['silent', 'ok'],
    ask: 'tight/gpt-a',
    status: 200,
    attempts: 2,
    model: 'claude/claude-b',
  },
  { kind: "the request's own fault", steps: ['bad_request'], status: 400, attempts: 1 },
  { kind: 'context overflow, no larger window', steps: ['context_overflow'], status: 400, attempts: 1 },
  { kind: 'content policy', steps: ['content_policy'], status: 400, attempts: 1 },
]

function answeredModel(wire: Wire, stream: boolean, text: string): string | null {
  if (stream) return readStream(wire, text).model
  return JSON.parse(text).model
}

for (const wire of ['chat', 'messages', 'responses'] as const) {
  for (const stream of [false, true]) {
    describe(`${wire}, ${stream ? 'stream' : 'JSON'}`, () => {
      for (const c of CASES) {
        test(`${c.kind} → ${c.status}${c.model ? ` from ${c.model}` : ''}, ${c.attempts} attempt(s)`, async () => {
          bed.up.script({ model: 'gpt-a' }, ...c.steps)
          const res = await bed.post(wire, c.ask ?? 'prime/gpt-a', { stream })
          const text = await res.text()
          expect(res.status).toBe(c.status)
          expect(bed.up.attempts()).toHaveLength(c.attempts)
          if (c.model) {
            expect(answeredModel(wire, stream, text)).toBe(c.model)
            if (stream)
              expect(readStream(wire, text)).toMatchObject({ text: bed.up.answer(), complete: true })
          }
        })
      }
    })
  }
}
