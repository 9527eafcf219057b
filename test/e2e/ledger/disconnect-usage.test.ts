/**
 * A client that disconnects mid-stream still costs the tokens it was sent: the record (status
 * 499) carries an estimate from the text the gateway relayed and from the request, and
 * `/v1/usage` counts it. Without this the record said 0 tokens although most of the answer left.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { type MockUpstream, startMockUpstream } from '../../../scripts/mock-upstream.ts'
import type { Completion } from '../../../src/store/index.ts'
import { estimateTokens, requestTextChars } from '../../../src/usage/estimate.ts'
import { chatConfigDoc, waitFor } from '../../support/chat-bed.ts'
import { bearer, startGateway, type TestGateway } from '../../support/gateway.ts'

/**
 * The chat bed's config with a stream of 24 chunks 250 ms apart (`mock/slow-stream` waits 1 s a
 * chunk: 3 s before a client that leaves after three deltas has its three). The client leaves
 * after three; the gateway then cancels the upstream, so the length costs no time, and the whole
 * answer (~32 tokens) is far past the ceiling below.
 */
const GAP_MS = 250
const MODEL = `mock/slow-stream-${GAP_MS}ms`
/**
 * How late the gateway may notice that the client left: the chunks relayed meanwhile count too
 * (measured: none past the client's three at load 18, i.e. within one gap).
 */
const LATE_MS = 1_000
/** The most characters one of the mock's words has (' upstream'). */
const WORD_CHARS = 9
/** Words the gateway may relay past the client's: LATE_MS of chunks, plus one it handed the socket. */
const LATE_WORDS = Math.ceil(LATE_MS / GAP_MS) + 1
let mock: MockUpstream
let gw: TestGateway
let key: string
const recorded: Completion[] = []
beforeAll(async () => {
  mock = await startMockUpstream({ chunks: 24 })
  const doc = chatConfigDoc(mock.url)
  const [first, ...rest] = doc.providers as Array<{ models: Array<{ name: string }> }>
  const model = { ...first!.models.find((m) => m.name === 'slow-stream')!, name: MODEL.slice('mock/'.length) }
  gw = await startGateway({
    doc: { ...doc, providers: [{ ...first, models: [...first!.models, model] }, ...rest] },
  })
  key = (await gw.key('e2e', 'unlimited')).key
  const recorder = gw.deps.recorder
  const record = recorder.record.bind(recorder)
  recorder.record = (c) => {
    recorded.push(c)
    record(c)
  }
}, 15_000)
afterAll(async () => {
  await gw?.stop()
  await mock?.stop()
})

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
  // The gateway may have relayed a few chunks more than this reader took (LATE_WORDS).
  expect(r.completionTokens!).toBeGreaterThanOrEqual(estimateTokens(content.length))
  expect(r.completionTokens!).toBeLessThanOrEqual(estimateTokens(content.length + LATE_WORDS * WORD_CHARS))
  expect(r.promptTokens).toBe(estimateTokens(requestTextChars(body)))
  expect(r.promptTokens!).toBeGreaterThan(100)
  return r
}

const PROMPT = 'Tell me a long story about a yard full of switches. '.repeat(10)

test('tokens of a chat stream the client left are recorded from what was relayed (estimated)', async () => {
  const body = {
    model: MODEL,
    stream: true,
    messages: [
      { role: 'system', content: 'You are terse. '.repeat(20) },
      { role: 'user', content: PROMPT },
    ],
  }
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  const content = await readThenLeave(res, 3, (e) => e.choices?.[0]?.delta?.content)
  const r = await expectEstimated(content, body)

  await gw.deps.recorder.flush()
  const u = (await (await fetch(`${gw.url}/v1/usage`, { headers: bearer(key) })).json()) as any
  expect(u.usage.today).toMatchObject({
    requests: 1,
    errors: 1,
    prompt_tokens: r.promptTokens,
    completion_tokens: r.completionTokens,
  })
}, 15_000)

test('the same on the Responses surface', async () => {
  recorded.length = 0
  const body = { model: MODEL, stream: true, instructions: 'Be terse.', input: PROMPT }
  const res = await fetch(`${gw.url}/v1/responses`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  const content = await readThenLeave(res, 3, (e) =>
    e.type === 'response.output_text.delta' ? e.delta : undefined,
  )
  const r = await expectEstimated(content, body)
  expect(r.status).toBe(499)
}, 15_000)
