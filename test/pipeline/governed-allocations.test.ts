/**
 * Issues 41 and 46 (what a governed request does beyond a plain one): steps on the path of a key
 * with token or money limits that made promises, lists or closures a synchronous path does not
 * need — the chat attempt waiting on the tokenizer's tables (loaded asynchronously then), each
 * allowance starting their load again, a list of field names and an empty tool-call list made per
 * event —
 * and what the plan's rows say worked out per request. Counted with JSC's cell counts, and shapes
 * of results: no timing. The count itself is unchanged (the whitespace carried is `\s`'s, unit by
 * unit).
 */

import { heapStats } from 'bun:jsc'
import { expect, test } from 'bun:test'
import { isSpace } from '../../src/limits/space.ts'
import type { ChatCompletionChunk } from '../../src/operations/chat.ts'
import type { ChargePlan } from '../../src/pipeline/charge.ts'
import { chatOperation } from '../../src/pipeline/operations/chat.ts'
import { OutputAllowance } from '../../src/pipeline/output-allowance.ts'
import { ChunkGate, choiceText } from '../../src/pipeline/output-cut.ts'

const N = 200
const cells = (type: string) => heapStats().objectTypeCounts[type] ?? 0

test('a metered chat attempt is made without a promise', () => {
  const charging = {
    charge: { rows: [{ resource: 'tokens', window: 'minute', scope: 'account', capacity: 10_000 }] },
    requested: 64,
    choices: 1,
    metered: true,
  } as unknown as ChargePlan
  const reservation = { tokens: 100, outputTokens: 64, micros: 0, clampedBy: null, states: [], handle: {} }
  const made = chatOperation.attempt(
    {
      deps: {},
      auth: { account: { id: 1 }, key: { id: 'k' } },
      entry: { provider: { kind: 'openai' }, model: { name: 'gpt-4o' } },
      surface: {},
      decoded: { stream: true, view: {} },
      headers: {},
    } as never,
    [],
    { reservation, charging, capped: null, finish: () => {}, answered: {} } as never,
  )
  // Before: `prepareOutputCount().then(…)` on every metered request, an await and a turn in run.ts.
  expect(made).not.toBeInstanceOf(Promise)
  expect(made).toMatchObject({ routes: [] })
})

test('an allowance starts no promise', () => {
  for (let i = 0; i < 5; i++) new OutputAllowance(64, 'o200k')
  Bun.gc(true)
  const before = cells('Promise')
  const kept: OutputAllowance[] = []
  for (let i = 0; i < N; i++) kept.push(new OutputAllowance(64, 'o200k'))
  // Before: an async call (its promise) per allowance (≥ N).
  expect(cells('Promise') - before).toBeLessThan(N / 2)
  expect(kept[N - 1]!.limit).toBe(64)
})

test("a choice's text is read without a list made for it", () => {
  const choice = {
    index: 0,
    delta: { content: ' word' },
    finish_reason: null,
  } as ChatCompletionChunk['choices'][number]
  const tool = {
    index: 0,
    delta: { tool_calls: [{ index: 0, function: { name: 'f', arguments: '{"a":1}' } }] },
    finish_reason: null,
  } as ChatCompletionChunk['choices'][number]
  for (let i = 0; i < 5; i++) choiceText(choice)
  Bun.gc(true)
  const before = cells('Array')
  let n = 0
  for (let i = 0; i < N; i++) n += choiceText(choice).length
  // Main: the field names' list and an empty tool-call list per call (≥ 2N).
  expect(cells('Array') - before).toBeLessThan(N / 2)
  expect(n).toBe(5 * N)
  expect(choiceText(tool)).toBe('f{"a":1}')
  expect(choiceText({ index: 0, delta: { content: 'a', refusal: 'b', reasoning: 'c' } } as never)).toBe('abc')
})

test("the whitespace carried to a choice's next text is exactly `\\s`'s, every UTF-16 unit", () => {
  const s = /\s/
  const differ: number[] = []
  for (let c = 0; c <= 0xffff; c++) if (isSpace(c) !== s.test(String.fromCharCode(c))) differ.push(c)
  expect(differ).toEqual([])
  // And the count with it: a word then its space counted as the word and the space joined.
  const gate = new ChunkGate(new OutputAllowance(1_000, 'o200k'), 0)
  const chunk = (content: string, finish: 'stop' | null = null) =>
    ({
      id: 'c',
      object: 'chat.completion.chunk',
      created: 0,
      model: 'm',
      choices: [{ index: 0, delta: { content }, finish_reason: finish }],
    }) as ChatCompletionChunk
  for (const t of ['Hello\u00a0', 'world\u3000', 'again ', '', 'end']) gate.admit(chunk(t))
  gate.admit(chunk('', 'stop'))
  expect(gate.counted).toBe(new OutputAllowance(1_000, 'o200k').add('Hello\u00a0world\u3000again end'))
})
