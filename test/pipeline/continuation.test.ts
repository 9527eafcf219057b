/**
 * The stream rescue's record of what the client was sent (src/pipeline/continuation.ts): an answer
 * that is text so far is continued from that text; once anything else reached the client (a tool
 * call, reasoning, a refusal, audio, another choice, the finish) it is not, since a prefilled
 * continuation carries text only. The end-to-end cut mid tool call is in
 * test/e2e/resilience/resilience-stream.test.ts.
 */
import { describe, expect, test } from 'bun:test'
import type { ModelConfig, ProviderConfig } from '../../src/config/schema.ts'
import type { ChatCompletionChunk, ChatMessage, ChatRequest } from '../../src/operations/chat.ts'
import { Continuation } from '../../src/pipeline/continuation.ts'
import { AttemptPlan, type Target } from '../../src/providers/resilience/attempt-plan.ts'
import { CircuitBoard } from '../../src/providers/resilience/circuit.ts'
import { KeyPool } from '../../src/providers/resilience/key-pool.ts'
import { DEFAULT_RETRY } from '../../src/providers/resilience/retry-wait.ts'
import type { StreamPlan } from '../../src/providers/types.ts'
import { ManualClock } from '../../src/util/clock.ts'
import { GatewayError } from '../../src/util/errors.ts'
import { callContext, drain, planItems } from '../providers/helpers.ts'

type Choice = ChatCompletionChunk['choices'][number]

const chunk = (...choices: Array<Partial<Choice>>): ChatCompletionChunk => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'first',
  choices: choices.map((c) => ({ index: 0, delta: {}, finish_reason: null, ...c })),
})
const delta = (d: Record<string, unknown>) => chunk({ delta: d as Choice['delta'] })
const ROLE = delta({ role: 'assistant', content: '', refusal: null })
const TEXT = (content: string) => delta({ content })

/** A plan whose first target answered (content reached the client) and whose second has `prefill`. */
function answeredPlan(): AttemptPlan {
  const clock = new ManualClock(0)
  const target = (id: string, features: string[]): Target => ({
    id,
    provider: { prefix: id.split('/')[0], kind: 'openai', models: [] } as unknown as ProviderConfig,
    model: { name: id.split('/')[1], context_window: 8192, max_output_tokens: 1024, features } as ModelConfig,
    pool: new KeyPool([{ apiKey: `${id}-key`, weight: 1 }], clock).forModel('m'),
    retry: { ...DEFAULT_RETRY },
    circuit: { failures: 3, cooldownMs: 30_000 },
  })
  const plan = new AttemptPlan(
    [target('a/first', ['streaming']), target('b/next', ['streaming', 'prefill'])],
    {
      board: new CircuitBoard(clock),
      clock,
    },
  )
  plan.next()
  plan.succeeded()
  return plan
}

/** A plan whose body yields `chunks` themselves (as the demo's does). */
function planOf(chunks: ChatCompletionChunk[]): StreamPlan<ChatCompletionChunk> {
  const body = new ReadableStream<ChatCompletionChunk>({
    start(c) {
      for (const x of chunks) c.enqueue(x)
      c.close()
    },
  })
  const provider = { prefix: 'a', kind: 'openai', models: [{ name: 'first' }] } as unknown as ProviderConfig
  return { body, stages: [], ctx: callContext(provider) }
}

/** Relays `chunks` through the rescue's tap, then asks it to continue: the prefill asked for, if any. */
async function cutAfter(chunks: ChatCompletionChunk[]): Promise<ChatMessage | null> {
  let asked: ChatMessage | null = null
  const rescue = new Continuation(
    answeredPlan(),
    async (_attempt, edit) => {
      const req: ChatRequest = { model: 'next', messages: [{ role: 'user', content: 'hi' }] }
      asked = edit(req).messages.at(-1)!
      return planOf([ROLE, chunk({ delta: { content: ' more' }, finish_reason: 'stop' })])
    },
    () => ({ transport: 'cut' }),
  )
  const relayed = await drain(planItems(rescue.tap(planOf(chunks))))
  expect(relayed.items).toEqual(chunks) // the tap passes everything on, as it came
  const next = await rescue.next(new GatewayError(502, 'upstream_stream_interrupted', 'cut'), '{}')
  if (next !== null) {
    // The continuation's own opening (role-only) chunk is dropped: the client's message goes on.
    const { items } = await drain(planItems(next))
    expect(items.map((x) => x.choices[0]!.delta.content)).toEqual([' more'])
  }
  return asked
}

describe('text so far: continued from it', () => {
  test('the content of choice 0 is the prefill', async () => {
    expect(await cutAfter([ROLE, TEXT('Let me'), TEXT(' check.')])).toEqual({
      role: 'assistant',
      content: 'Let me check.',
    })
  })

  test('empty companions of the text do not count (refusal: null, tool_calls: [], reasoning_content: null)', async () => {
    const chunks = [ROLE, delta({ content: 'Hi', refusal: null, tool_calls: [], reasoning_content: null })]
    expect(await cutAfter([...chunks, delta({ content: ' there', function_call: null, audio: '' })])).toEqual(
      {
        role: 'assistant',
        content: 'Hi there',
      },
    )
  })

  test('nothing relayed but the head: nothing to continue', async () => {
    expect(await cutAfter([ROLE])).toBeNull()
  })
})

describe('anything but text relayed: not continued (the stream ends with the error in-band)', () => {
  const call = { index: 0, id: 'call_A', type: 'function', function: { name: 'weather', arguments: '' } }
  const KINDS: Array<[string, ChatCompletionChunk]> = [
    ['a tool call begun', delta({ tool_calls: [call] })],
    [
      'a piece of tool-call arguments',
      delta({ tool_calls: [{ index: 0, function: { arguments: '{"ci' } }] }),
    ],
    ['a legacy function_call', delta({ function_call: { name: 'weather', arguments: '' } })],
    ['a refusal', delta({ refusal: 'I cannot' })],
    ['reasoning (reasoning_content)', delta({ reasoning_content: 'Thinking' })],
    ['reasoning (reasoning)', delta({ reasoning: 'Thinking' })],
    ['audio', delta({ audio: { id: 'audio_1', data: 'AAAA' } })],
    ['a kind not named anywhere', delta({ reasoning_details: [{ type: 'reasoning.text', text: 'x' }] })],
    ['text of a second choice', chunk({ index: 1, delta: { content: 'other' } })],
    ['two choices in one chunk', chunk({ delta: { content: 'a' } }, { index: 1, delta: { content: 'b' } })],
    ['the finish', chunk({ delta: {}, finish_reason: 'stop' })],
  ]
  for (const [kind, relayed] of KINDS) {
    test(`text, then ${kind}, then a cut`, async () => {
      expect(await cutAfter([ROLE, TEXT('Let me check.'), relayed])).toBeNull()
    })
  }

  test('text after a tool call does not make it continuable again', async () => {
    expect(await cutAfter([ROLE, TEXT('Let me'), delta({ tool_calls: [call] }), TEXT(' check.')])).toBeNull()
  })
})
