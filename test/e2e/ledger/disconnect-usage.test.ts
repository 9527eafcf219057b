/**
 * A client that disconnects mid-stream still costs the tokens it was sent: the record (status
 * 499) carries an estimate from the text the gateway relayed and from the request, and
 * `/v1/usage` counts it. Without this the record said 0 tokens although most of the answer left.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Completion } from '../../../src/store/index.ts'
import { estimateTokens, requestTextChars } from '../../../src/usage/estimate.ts'
import { type ChatBed, startChatBed, waitFor } from '../../support/chat-bed.ts'
import { bearer } from '../../support/gateway.ts'

let bed: ChatBed
const recorded: Completion[] = []
beforeAll(async () => {
  bed = await startChatBed({ mockChunks: 12 })
  const recorder = bed.gw.deps.recorder
  const record = recorder.record.bind(recorder)
  recorder.record = (c) => {
    recorded.push(c)
    record(c)
  }
}, 15_000)
afterAll(() => bed.stop())

/** Reads a stream until `n` text deltas arrived, then disconnects; returns the text it saw. */
async function readThenLeave(
  res: Response,
  n: number,
  textOf: (event: any) => string | undefined,
): Promise<string> {
  expect(res.status).toBe(200)
  const reader = res.body!.getReader()
  const dec = new TextDecoder()
  let buf = ''
  let content = ''
  let deltas = 0
  while (deltas < n) {
    const { value, done } = await reader.read()
    if (done) throw new Error('the stream ended before the client left')
    buf += dec.decode(value, { stream: true })
    for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
      const frame = buf.slice(0, i)
      buf = buf.slice(i + 2)
      if (!frame.includes('data: {')) continue
      const text = textOf(JSON.parse(frame.slice(frame.indexOf('data: ') + 6)))
      if (text) {
        content += text
        deltas++
      }
    }
  }
  await reader.cancel()
  return content
}

async function expectEstimated(content: string, body: unknown): Promise<Completion> {
  await waitFor(() => recorded.length === 1, 2_000)
  const r = recorded[0]!
  expect(r.status).toBe(499)
  expect(r.errorCode).toBe('client_closed_request')
  // The gateway may have handed a chunk or two more to the socket than this reader took.
  expect(r.completionTokens!).toBeGreaterThanOrEqual(estimateTokens(content.length))
  expect(r.completionTokens!).toBeLessThanOrEqual(estimateTokens(content.length) + 10)
  expect(r.promptTokens).toBe(estimateTokens(requestTextChars(body)))
  expect(r.promptTokens!).toBeGreaterThan(100)
  return r
}

const PROMPT = 'Tell me a long story about a yard full of switches. '.repeat(10)

test('tokens of a chat stream the client left are recorded from what was relayed (estimated)', async () => {
  const body = {
    model: 'mock/slow-stream',
    stream: true,
    messages: [
      { role: 'system', content: 'You are terse. '.repeat(20) },
      { role: 'user', content: PROMPT },
    ],
  }
  const content = await readThenLeave(await bed.post(body), 3, (e) => e.choices?.[0]?.delta?.content)
  const r = await expectEstimated(content, body)

  await bed.gw.deps.recorder.flush()
  const u = (await (await fetch(`${bed.gw.url}/v1/usage`, { headers: bearer(bed.key) })).json()) as any
  expect(u.usage.today).toMatchObject({
    requests: 1,
    errors: 1,
    prompt_tokens: r.promptTokens,
    completion_tokens: r.completionTokens,
  })
}, 15_000)

test('the same on the Responses surface', async () => {
  recorded.length = 0
  const body = { model: 'mock/slow-stream', stream: true, instructions: 'Be terse.', input: PROMPT }
  const res = await fetch(`${bed.gw.url}/v1/responses`, {
    method: 'POST',
    headers: { ...bearer(bed.key), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  const content = await readThenLeave(res, 3, (e) =>
    e.type === 'response.output_text.delta' ? e.delta : undefined,
  )
  const r = await expectEstimated(content, body)
  expect(r.status).toBe(499)
}, 15_000)
