/**
 * The hand-written OTLP encoders against the test collector's decoders: every attribute type, a
 * text that is not ASCII, and bodies on both sides of 128 bytes (one length byte kept in place,
 * or the body slid along for a longer varint) read back as they were written, in protobuf and in
 * JSON alike.
 */
import { expect, test } from 'bun:test'
import { encodeJson } from '../../src/telemetry/otlp-json.ts'
import { encodeProto, SpanBatch } from '../../src/telemetry/otlp-proto.ts'
import type { AttributeValue, SpanRecord } from '../../src/telemetry/span.ts'
import { decodeJson, decodeProto } from '../support/otlp-collector.ts'

const RESOURCE = { serviceName: 'switchyard', serviceVersion: '1.2.3' }

const span = (name: string, attributes: SpanRecord['attributes'], parent: string | null): SpanRecord => ({
  traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
  spanId: '00f067aa0ba902b7',
  parentSpanId: parent,
  name,
  kind: 3,
  startMs: 1_764_393_600_000.25,
  endMs: 1_764_393_600_012.5,
  attributes,
  status: { code: 2, message: 'upstream_error' },
})

test('spans read back as written: every value type, non-ASCII text, short and long bodies; unset keys not sent', () => {
  const spans = [
    span(
      'chat m',
      { 'gen_ai.request.model': 'm', n: 1, unset: undefined, neg: -5, cost: 0.0034, ok: true },
      null,
    ),
    span(
      `chat ${'x'.repeat(126)}`,
      {
        'switchyard.account': 'Zürich – café ☕',
        a127: 'a'.repeat(127),
        a128: 'b'.repeat(128),
        long: 'é'.repeat(20_000),
        big: 2 ** 52,
      },
      'b7ad6b7169203331',
    ),
  ]
  const proto = decodeProto(encodeProto(spans, RESOURCE))
  const json = decodeJson(JSON.parse(encodeJson(spans, RESOURCE)))
  expect(proto).toEqual(json)
  expect(proto.map((s) => [s.name, s.parentSpanId, s.attributes, s.status, s.resource])).toEqual(
    spans.map((s) => [
      s.name,
      s.parentSpanId ?? '',
      Object.fromEntries(Object.entries(s.attributes).filter(([, v]) => v !== undefined)) as Record<
        string,
        AttributeValue
      >,
      s.status,
      { 'service.name': 'switchyard', 'service.version': '1.2.3' },
    ]),
  )
  expect(proto[0]!.end - proto[0]!.start).toBe(12_250_000n)
})

test('a batch sealed again and again holds only its own spans; a resource too long for the head room still reads back', () => {
  const one = span('chat a', { n: 1 }, null)
  const two = span('chat b', { n: 2 }, null)
  const batch = new SpanBatch(RESOURCE)
  batch.add(one)
  const first = decodeProto(batch.seal())
  batch.add(two)
  batch.add(two)
  const second = decodeProto(batch.seal())
  expect([first.map((s) => s.name), second.map((s) => s.name)]).toEqual([['chat a'], ['chat b', 'chat b']])
  const version = 'v'.repeat(300)
  const long = decodeProto(encodeProto([one], { serviceName: 'switchyard', serviceVersion: version }))
  expect(long.map((s) => [s.name, s.resource])).toEqual([
    ['chat a', { 'service.name': 'switchyard', 'service.version': version }],
  ])
})
