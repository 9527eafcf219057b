/**
 * A span the encoder cannot encode (a NaN time, an attribute that throws when read) costs its
 * batch, counted as dropped and logged — never an uncaught exception on the export's timer, a
 * queue that keeps the lost spans' places until it refuses everything, or a half-written span
 * left in the protobuf writer to corrupt the next export's body.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { MAX_QUEUE, SpanExporter } from '../../src/telemetry/exporter.ts'
import type { SpanRecord } from '../../src/telemetry/span.ts'
import { type OtlpCollector, startOtlpCollector } from '../support/otlp-collector.ts'

let collector: OtlpCollector
beforeAll(() => {
  collector = startOtlpCollector()
})
afterAll(() => collector.stop())

const span = (i: number, over: Partial<SpanRecord> = {}): SpanRecord => ({
  traceId: '0af7651916cd43dd8448eb211c80319c',
  spanId: (0x1000000000000000n + BigInt(i)).toString(16),
  parentSpanId: null,
  name: `s${i}`,
  kind: 2,
  startMs: 1_700_000_000_000,
  endMs: 1_700_000_000_005,
  attributes: { 'http.response.status_code': 200 },
  status: { code: 1 },
  ...over,
})

/** An attribute whose read throws: the encoder fails after the span's ids and times are written. */
function throwingAttributes(): SpanRecord['attributes'] {
  const attrs: SpanRecord['attributes'] = { before: 'x' }
  Object.defineProperty(attrs, 'boom', {
    enumerable: true,
    get() {
      throw new Error('unreadable attribute')
    },
  })
  return attrs
}

for (const [protocol, bad] of [
  ['http/json', span(0, { startMs: Number.NaN })],
  ['http/protobuf', span(0, { attributes: throwingAttributes() })],
] as const) {
  test(`${protocol}: a batch that cannot be encoded is dropped and logged once; the spans after it are all exported`, async () => {
    const warned: unknown[] = []
    const log = { warn: (...a: unknown[]) => warned.push(a), info() {}, error() {}, debug() {} } as never
    const exporter = new SpanExporter({
      url: `${collector.url}/v1/traces`,
      headers: {},
      protocol,
      intervalMs: 60_000,
      resource: { serviceName: 'switchyard', serviceVersion: '1.0.0' },
      log,
    })
    const before = collector.spans.length
    exporter.add(bad)
    exporter.add(span(1))
    await exporter.flush()
    expect([exporter.exported, exporter.dropped]).toEqual([0, 2])
    expect(warned).toHaveLength(1)
    expect(JSON.stringify(warned)).toContain('encod')
    // A whole queue's worth after it: none refused (the lost batch's places were given back),
    // and every body decodes to exactly its spans (nothing half-written before them).
    for (let i = 0; i < MAX_QUEUE; i++) exporter.add(span(10 + i))
    await exporter.flush()
    expect([exporter.exported, exporter.dropped]).toEqual([MAX_QUEUE, 2])
    const got = collector.spans.slice(before)
    expect(got).toHaveLength(MAX_QUEUE)
    expect(got[0]!.name).toBe('s10')
    expect(
      got.every(
        (s) => s.start === 1_700_000_000_000_000_000n && s.attributes['http.response.status_code'] === 200,
      ),
    ).toBe(true)
  })
}
