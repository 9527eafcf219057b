/**
 * A sampled request's turn pays for its spans' building, not their encoding: the spans a request
 * ends wait as they are, and are encoded when their batch is sealed — the export's own turn (its
 * timer, or an immediate one once a batch of 512 waits) — then sent to the collector as one
 * export, read back here by the test collector.
 */
import { afterAll, beforeAll, expect, spyOn, test } from 'bun:test'
import { Tracer } from '../../src/telemetry/index.ts'
import { SpanBatch } from '../../src/telemetry/otlp-proto.ts'
import { type OtlpCollector, startOtlpCollector } from '../support/otlp-collector.ts'

let collector: OtlpCollector
beforeAll(() => {
  collector = startOtlpCollector()
})
afterAll(() => collector.stop())

const log = { warn() {}, info() {}, error() {}, debug() {} } as never

/** A tracer exporting protobuf to the test collector, every request sampled, its timer a minute away. */
const protobufTracer = () =>
  new Tracer(
    {
      tracesUrl: `${collector.url}/v1/traces`,
      headers: {},
      protocol: 'http/protobuf',
      sampleRatio: 1,
    } as never,
    log,
    '1.0.0',
    60_000,
  )

function request(tracer: Tracer, i: number): void {
  const trace = tracer.begin(new Request('http://127.0.0.1/v1/chat/completions'), 'chat')!
  trace.routed({
    model: 'mock/m',
    providerKind: 'openai',
    account: 'acct',
    keyId: 'key_1',
    surface: 'chat',
    requestId: `req_${i}`,
  })
  trace.attempt({
    providerKind: 'openai',
    provider: 'mock',
    model: 'mock/m',
    upstreamModel: 'm',
    key: 0,
    n: 1,
  })
  trace.finish({
    status: 200,
    errorCode: null,
    usage: { prompt_tokens: 3, completion_tokens: 4 },
    responseModel: 'mock/m',
    upstreamModel: 'm',
    costMicros: 10,
    attempts: 1,
  })
}

test("a request's end encodes nothing; the spans are encoded and sent on the export's turn", async () => {
  const tracer = protobufTracer()
  const encoded = spyOn(SpanBatch.prototype, 'add')
  try {
    for (let i = 0; i < 3; i++) request(tracer, i)
    expect(encoded).toHaveBeenCalledTimes(0)
    await tracer.close()
    expect(encoded).toHaveBeenCalledTimes(6)
  } finally {
    encoded.mockRestore()
  }
  expect(collector.spans.map((s) => s.name).sort()).toEqual([
    ...Array(3).fill('chat m'),
    ...Array(3).fill('chat mock/m'),
  ])
})

test('a full batch (512 spans) is encoded and sent on its own, without waiting for the timer', async () => {
  const tracer = protobufTracer()
  const before = collector.spans.length
  for (let i = 0; i < 256; i++) request(tracer, i)
  // Nothing flushes it here: the export turn the full batch scheduled sends it.
  while (tracer.exporter.exported < 512) await Bun.sleep(5)
  expect(collector.spans.length - before).toBe(512)
  await tracer.close()
})

test('a flush with nothing to send leaves the exporter sending: the spans after it are exported, not dropped', async () => {
  const tracer = protobufTracer()
  // Nothing queued: as the export timer left over from a batch already sent, or a close at idle.
  await tracer.exporter.flush()
  request(tracer, 1)
  await tracer.exporter.flush()
  expect([tracer.exporter.exported, tracer.exporter.dropped]).toEqual([2, 0])
  await tracer.close()
})
