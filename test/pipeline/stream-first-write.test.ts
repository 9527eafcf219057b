/**
 * The stream writer's first write (src/pipeline/stream/writer.ts): what the hold kept until the
 * first content is in the body before the server has it, so Bun sends the status, the headers
 * and those bytes in one socket write. Left to the body's first pull, the headers went out alone
 * first (strace, stop 60: two `sendto`s a stream where a JSON answer takes one).
 */
import { expect, spyOn, test } from 'bun:test'
import type { ChatCompletionChunk } from '../../src/operations/chat.ts'
import { StreamWriter } from '../../src/pipeline/stream/writer.ts'
import { ChatChunkEncoder } from '../../src/surfaces/chat/stream-encoder.ts'

const chunk = (delta: ChatCompletionChunk['choices'][number]['delta']): ChatCompletionChunk => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'upstream-name',
  choices: [{ index: 0, delta, finish_reason: null, logprobs: null }],
})

/** A role chunk, a content chunk, then nothing more for as long as the test runs. */
function source(): ReadableStream<ChatCompletionChunk> {
  const steps = [chunk({ role: 'assistant', content: '' }), chunk({ content: 'Hi' })]
  return new ReadableStream<ChatCompletionChunk>(
    {
      pull(c) {
        const next = steps.shift()
        if (next) c.enqueue(next)
        else return new Promise(() => {})
      },
    },
    { highWaterMark: 0 },
  )
}

test('the bytes held for content are queued in the body at its start: its first read needs no pull', async () => {
  const writer = new StreamWriter(source(), new ChatChunkEncoder('prefix/model', false), {
    keepaliveMs: 10_000,
    holdMs: 1_000,
    holdForContent: true,
    onFinish: () => {},
  })
  const pull = spyOn(writer, 'pull')
  const out = await writer.open()
  if (out.status !== 'ok') throw new Error(out.error.code)
  const reader = out.body.getReader()
  let text = ''
  while (!text.includes('"content":"Hi"')) text += new TextDecoder().decode((await reader.read()).value)
  expect(text).toContain('"role":"assistant"')
  expect(pull).not.toHaveBeenCalled()
  await reader.cancel()
})
