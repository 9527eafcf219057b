/**
 * The chat pass-through's gate counts a chunk's text however its event is framed, and cuts inside
 * a batch of events: the events before the refused one go out ahead of the ending (finish
 * "length", usage, [DONE]). A JSON answer is assembled from the chunks the gate parsed, a read's
 * events an item, as it would be from its events one by one.
 */
import { describe, expect, test } from 'bun:test'
import { outputTokenCount } from '../../../src/limits/output-count.ts'
import { OutputAllowance } from '../../../src/pipeline/output-allowance.ts'
import type { EncodeContext } from '../../../src/pipeline/surface.ts'
import { assembleChat, ChatCutGate } from '../../../src/surfaces/chat/pass-through-cut.ts'

describe('ChatCutGate counts what the event says, whatever its framing', () => {
  // The same text in every shape the gate reads: escapes and UTF-8 decoded, spaced JSON, an
  // `event:` line, data split over two lines, reasoning beside content.
  const text = 'h\\u00e9 \\"q\\" ✓ hello'
  const events = [
    `data: {"id":"a","choices":[{"index":0,"delta":{"role":"assistant","content":"${text}","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}\n\n`,
    `data: {"id": "a", "choices": [{"index": 0, "delta": {"content": "${text}"}, "finish_reason": null}]}\n\n`,
    `event: message\ndata: {"choices":[{"index":0,"delta":{"content":"${text}"}}]}\n\n`,
    `data: {"choices":[{"index":0,\ndata: "delta":{"content":"${text}"}}]}\n\n`,
  ]
  const counted = (event: string) => {
    const gate = new ChatCutGate(new OutputAllowance(10_000, 'o200k'), 5)
    expect(gate.admit(Buffer.from(event))).toBe(true)
    return gate.counted
  }
  test('one count for every framing; none for [DONE], a comment or the usage chunk', () => {
    const first = counted(events[0]!)
    expect(first).toBe(outputTokenCount(JSON.parse(`"${text}"`), 'o200k'))
    for (const e of events) expect(counted(e)).toBe(first)
    const both = `data: {"choices":[{"index":0,"delta":{"reasoning_content":"${text}","content":"${text}"}}]}\n\n`
    expect(counted(both)).toBe(outputTokenCount(JSON.parse(`"${text}${text}"`), 'o200k'))
    for (const e of [
      'data: [DONE]\n\n',
      ': keep-alive\n\n',
      'data: {"choices":[],"usage":{"prompt_tokens":1}}\n\n',
    ])
      expect(counted(e)).toBe(0)
  })
  test('a read of events framed every way counts as its events one by one', () => {
    // One-line events beside ones of several lines, a comment and a stray blank line: each
    // event's end is found as alone (the gate searches a line feed first, the blank line after).
    const mixed = [events[2]!, events[0]!, events[3]!, ': keep-alive\n\n', '\n\n', events[1]!, events[3]!]
    const gate = new ChatCutGate(new OutputAllowance(10_000, 'o200k'), 5)
    expect(gate.admit(Buffer.from(mixed.join('')))).toBe(true)
    expect(gate.counted).toBe(5 * counted(events[0]!))
  })
})

describe('ChatCutGate reads a one-line event off its bytes as JSON.parse reads its data', () => {
  // The one-line `data: {…}` event is parsed in place (Bun.JSONL.parseChunk); an event framed
  // otherwise goes through its decoded data and JSON.parse. Both readings must count alike.
  const counted = (event: Uint8Array) => {
    const gate = new ChatCutGate(new OutputAllowance(10_000, 'o200k'), 5)
    expect(gate.admit(event)).toBe(true)
    return gate.counted
  }
  const line = (data: Uint8Array) => Buffer.concat([Buffer.from('data: '), data, Buffer.from('\n\n')])
  const framed = (data: Uint8Array) =>
    Buffer.concat([Buffer.from('event: message\ndata: '), data, Buffer.from('\n\n')])
  const choice = (content: string) => `{"choices":[{"index":0,"delta":{"content":"${content}"}}]}`
  const datas: [string, Uint8Array][] = [
    ['plain', Buffer.from(choice('hello there world'))],
    [
      'a duplicated key: the last one',
      Buffer.from('{"choices":[{"index":0,"delta":{"content":"a","content":"b c d e f"}}]}'),
    ],
    ['two values on the line', Buffer.from(`${choice('one two three')} ${choice('four')}`)],
    ['a value and then text', Buffer.from(`${choice('one two three')}x`)],
    ['a form feed after the value', Buffer.from(`${choice('one two three')}\f`)],
    ['a carriage return after the value', Buffer.from(`${choice('one two three')}\r`)],
    ['spaces after the value', Buffer.from(`${choice('one two three')}   `)],
    ['cut short', Buffer.from(choice('one two three').slice(0, -3))],
    [
      'invalid UTF-8 in the text',
      Buffer.concat([
        Buffer.from('{"choices":[{"index":0,"delta":{"content":"x'),
        Buffer.from([0xff, 0xfe, 0xc3, 0x20, 0xed, 0xa0, 0x80]),
        Buffer.from(' y"}}]}'),
      ]),
    ],
    ['non-ASCII text', Buffer.from(choice('héllo ✓ 😀 wörld'))],
  ]
  for (const [name, data] of datas)
    test(name, () => {
      let expected = 0
      try {
        const chunk = JSON.parse(Buffer.from(data).toString('utf8'))
        expected = outputTokenCount(chunk.choices[0].delta.content, 'o200k')
      } catch {}
      expect(counted(line(data))).toBe(expected)
      expect(counted(framed(data))).toBe(expected)
    })
})

describe('ChatCutGate', () => {
  const chunk = (text: string) =>
    `data: {"id":"c1","object":"chat.completion.chunk","created":7,"model":"up","choices":[{"index":0,"delta":{"content":"${text}"},"finish_reason":null}]}\n\n`

  test('a cut inside a batch: the events before it, then length, the usage and [DONE]', () => {
    const gate = new ChatCutGate(new OutputAllowance(15, 'o200k'), 5)
    const events = Array.from({ length: 6 }, () => chunk('w '.repeat(10)))
    const batch = Buffer.from(events.join(''))
    expect(gate.admit(batch)).toBe(false)
    expect(gate.cut).toBe(true)
    const ending = gate.ending().map((b) => Buffer.from(b).toString())
    // 10 tokens a delta (and its carried space): the second would pass 15 and is refused.
    expect(ending[0]).toBe(events[0])
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
    // What was relayed, not the refused delta: the first delta's 10 tokens and its space.
    expect(gate.counted).toBe(11)
    expect(ending[3]).toBe('data: [DONE]\n\n')
  })
})

describe('assembleChat over what the gate read', () => {
  const ctx = { modelId: 'gw/m', provider: { prefix: 'up' } } as unknown as EncodeContext<unknown>
  const chunk = (text: string, finish: string | null = null) =>
    `data: {"id":"c1","object":"chat.completion.chunk","created":7,"model":"up","choices":[{"index":0,"delta":{"content":"${text}"},"finish_reason":${finish === null ? null : `"${finish}"`}}]}\n\n`
  const usage =
    'data: {"id":"c1","object":"chat.completion.chunk","created":7,"model":"up","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}\n\n'
  const events = [
    chunk('one '),
    `event: message\ndata: {"id":"c1","choices":[{"index":0,"delta":{"content":"two "}}]}\n\n`,
    ': keep-alive\n\n',
    chunk('three', 'stop'),
    usage,
    'data: [DONE]\n\n',
    chunk('after done'),
  ]

  test('a read of events admitted whole assembles as its events one by one would', () => {
    const one = (items: Uint8Array[], keep = true) => {
      const gate = new ChatCutGate(new OutputAllowance(10_000, 'o200k'), 3, keep)
      for (const item of items) expect(gate.admit(item)).toBe(true)
      return assembleChat(items, ctx)
    }
    const whole = one([Buffer.from(events.join(''))])
    expect(whole).toEqual(one(events.map((e) => Buffer.from(e))))
    // A stream's gate keeps nothing: the events are read again, to the same answer.
    expect(whole).toEqual(one([Buffer.from(events.join(''))], false))
    const completion = JSON.parse(whole.body)
    expect(completion.choices[0].message.content).toBe('one two three')
    expect(completion.choices[0].finish_reason).toBe('stop')
    expect(completion.model).toBe('gw/m')
    expect(whole.usage).toEqual({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 })
  })

  test('cut inside a read: the events before the refused one, then the ending, as the answer', () => {
    const gate = new ChatCutGate(new OutputAllowance(15, 'o200k'), 5, true)
    const read = Buffer.from(Array.from({ length: 6 }, () => chunk('w '.repeat(10))).join(''))
    expect(gate.admit(read)).toBe(false)
    const out = assembleChat(gate.ending(), ctx)
    const completion = JSON.parse(out.body)
    expect(completion.choices[0].message.content).toBe('w '.repeat(10))
    expect(completion.choices[0].finish_reason).toBe('length')
    expect(out.usage).toEqual({
      prompt_tokens: 5,
      completion_tokens: gate.counted,
      total_tokens: 5 + gate.counted,
    })
  })

  test('tool calls assembled across chunks; a choice without a delta still brings its finish and logprobs', () => {
    const choice = (c: string) => `data: {"id":"c1","created":7,"model":"up","choices":[${c}]}\n\n`
    const read = Buffer.from(
      [
        choice(
          '{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get","arguments":""}}]}}',
        ),
        choice('{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\\"a\\":1}"}}]}}'),
        choice('{"index":0,"finish_reason":"tool_calls","logprobs":{"content":[]}}'),
        'data: [DONE]\n\n',
      ].join(''),
    )
    const gate = new ChatCutGate(new OutputAllowance(10_000, 'o200k'), 3, true)
    expect(gate.admit(read)).toBe(true)
    const c = JSON.parse(assembleChat([read], ctx).body).choices[0]
    expect(c.finish_reason).toBe('tool_calls')
    expect(c.logprobs).toEqual({ content: [] })
    expect(c.message.content).toBeNull()
    expect(c.message.tool_calls).toEqual([
      { id: 'call_1', type: 'function', function: { name: 'get', arguments: '{"a":1}' } },
    ])
  })

  test('an error event in a read fails the answer as the upstream error', () => {
    const gate = new ChatCutGate(new OutputAllowance(10_000, 'o200k'), 3, true)
    const read = Buffer.from(
      `${chunk('one ')}data: {"error":{"message":"overloaded","type":"server_error"}}\n\n`,
    )
    expect(gate.admit(read)).toBe(true)
    expect(() => assembleChat([read], ctx)).toThrow('overloaded')
  })
})
