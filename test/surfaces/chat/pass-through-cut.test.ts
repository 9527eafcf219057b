/**
 * The chat pass-through's gate reads a chunk's text off its bytes (`scanChoice`) only in the
 * common shape — anything else is left to a parse — and cuts inside a batch of events: the
 * events before the refused one go out ahead of the ending (finish "length", usage, [DONE]).
 */
import { beforeAll, describe, expect, test } from 'bun:test'
import { prepareOutputCount } from '../../../src/limits/output-count.ts'
import { OutputAllowance } from '../../../src/pipeline/output-allowance.ts'
import { ChatCutGate, scanChoice } from '../../../src/surfaces/chat/pass-through-cut.ts'

const scan = (event: string) => {
  const buf = Buffer.from(event)
  return scanChoice(buf, buf.toString('latin1'))
}

beforeAll(() => prepareOutputCount())

describe('scanChoice', () => {
  test('reads the text fields of one choice, escapes and UTF-8 decoded, spacing allowed', () => {
    expect(
      scan(
        'data: {"id":"a","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"h\\u00e9 \\"q\\"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}\n\n',
      ),
    ).toEqual({ index: 0, delta: { content: 'hé "q"' }, finish: null })
    expect(
      scan(
        'data: {"id": "a", "choices": [{"index": 2, "delta": {"reasoning_content": "héllo ✓"}, "finish_reason": "stop"}]}\n\n',
      ),
    ).toEqual({ index: 2, delta: { reasoning_content: 'héllo ✓' }, finish: 'stop' })
  })

  test('leaves every other shape to a parse: tool calls, logprobs, no choice, several choices, two lines', () => {
    const others = [
      'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]},"finish_reason":null}]}\n\n',
      'data: {"choices":[{"index":0,"delta":{"content":"x"},"logprobs":{"content":[]},"finish_reason":null}]}\n\n',
      'data: {"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}\n\n',
      'data: {"choices":[{"index":0,"delta":{"content":"a"}},{"index":1,"delta":{"content":"b"}}]}\n\n',
      'event: message\ndata: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\n',
      'data: [DONE]\n\n',
    ]
    for (const e of others) expect(scan(e)).toBeNull()
  })
})

describe('ChatCutGate', () => {
  const chunk = (text: string) =>
    `data: {"id":"c1","object":"chat.completion.chunk","created":7,"model":"up","choices":[{"index":0,"delta":{"content":"${text}"},"finish_reason":null}]}\n\n`

  test('a cut inside a batch: the events before it, then length, the usage and [DONE]', () => {
    const gate = new ChatCutGate(new OutputAllowance(15, 'openai'), 5)
    const events = Array.from({ length: 6 }, () => chunk('w '.repeat(10)))
    const batch = Buffer.from(events.join(''))
    expect(gate.admit(batch)).toBe(false)
    expect(gate.cut).toBe(true)
    const ending = gate.ending().map((b) => Buffer.from(b).toString())
    // 10 tokens a delta: the second crosses 15 and is relayed; the third is refused.
    expect(ending[0]).toBe(events.slice(0, 2).join(''))
    expect(JSON.parse(ending[1]!.slice(6))).toEqual({
      id: 'c1',
      object: 'chat.completion.chunk',
      created: 7,
      model: 'up',
      choices: [{ index: 0, delta: {}, finish_reason: 'length' }],
    })
    const usage = JSON.parse(ending[2]!.slice(6)).usage
    expect(usage.prompt_tokens).toBe(5)
    expect(usage.completion_tokens).toBe(gate.counted)
    expect(ending[3]).toBe('data: [DONE]\n\n')
  })
})
