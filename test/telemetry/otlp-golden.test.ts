/**
 * The exported bytes pinned: a request span and its attempts as the gateway writes them (every
 * attribute it sets, in its order; a failed attempt; a span with no parent), encoded as protobuf
 * and as JSON, must be byte for byte what the encoders wrote before they were made faster
 * (main at a5dce51; the digests below are of that output). A collector that read the old bytes
 * reads the new ones.
 */
import { expect, test } from 'bun:test'
import { encodeJson } from '../../src/telemetry/otlp-json.ts'
import { encodeProto, SpanBatch } from '../../src/telemetry/otlp-proto.ts'
import type { SpanRecord } from '../../src/telemetry/span.ts'

const RESOURCE = { serviceName: 'switchyard', serviceVersion: '1.2.3' }
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736'

const request: SpanRecord = {
  traceId: TRACE,
  spanId: '00f067aa0ba902b7',
  parentSpanId: null,
  name: 'chat mock/bench-priced',
  kind: 2,
  startMs: 1_764_393_600_000.123,
  endMs: 1_764_393_600_412.987,
  attributes: {
    'gen_ai.operation.name': 'chat',
    'gen_ai.request.model': 'mock/bench-priced',
    'gen_ai.provider.name': 'openai',
    'switchyard.account': 'bench',
    'switchyard.key_id': 'key_0123456789abcdef',
    'switchyard.surface': 'chat',
    'switchyard.request_id': 'req_01JD8Z3Q4K5M6N7P8R9S0T1V2W',
    'switchyard.client_request_id': undefined,
    'http.response.status_code': 200,
    'switchyard.attempts': 2,
    'gen_ai.response.model': 'mock/bench-priced',
    'gen_ai.usage.input_tokens': 10,
    'gen_ai.usage.output_tokens': 12,
    'switchyard.cost_usd': 0.0034,
    'error.type': undefined,
  },
  status: { code: 0 },
}

const attempt = (n: number, failed: boolean): SpanRecord => ({
  traceId: TRACE,
  spanId: `b7ad6b716920333${n}`,
  parentSpanId: '00f067aa0ba902b7',
  name: 'chat bench-priced',
  kind: 3,
  startMs: 1_764_393_600_001.5 + n * 100,
  endMs: 1_764_393_600_090.25 + n * 100,
  attributes: {
    'gen_ai.operation.name': 'chat',
    'gen_ai.request.model': 'bench-priced',
    'gen_ai.provider.name': 'openai',
    'switchyard.provider': 'mock',
    'switchyard.model': 'mock/bench-priced',
    'switchyard.key_index': n - 1,
    'switchyard.attempt': n,
    'switchyard.failure_kind': failed ? 'server' : undefined,
    'error.type': failed ? 'upstream_error' : undefined,
    'http.response.status_code': failed ? 500 : undefined,
    'gen_ai.response.model': failed ? undefined : 'bench-priced',
    'gen_ai.usage.input_tokens': failed ? undefined : 10,
    'gen_ai.usage.output_tokens': failed ? undefined : 12,
    'switchyard.cost_usd': failed ? undefined : 0.0034,
  },
  status: failed ? { code: 2, message: 'upstream_error' } : { code: 0 },
})

const SPANS = [attempt(1, true), attempt(2, false), request]

const sha256 = (b: Uint8Array | string) => new Bun.CryptoHasher('sha256').update(b).digest('hex')

test('protobuf: the bytes of a request span and its attempts are unchanged, one batch or several', () => {
  const proto = encodeProto(SPANS, RESOURCE)
  expect([proto.length, sha256(proto)]).toEqual([PROTO_LENGTH, PROTO_SHA256])
  // The exporter's batch, sealed twice: the second batch's bytes as a fresh one's.
  const batch = new SpanBatch(RESOURCE)
  for (const s of SPANS) batch.add(s)
  batch.seal()
  for (const s of SPANS) batch.add(s)
  expect(sha256(batch.seal())).toBe(PROTO_SHA256)
})

test('JSON: the text of the same spans is unchanged', () => {
  const json = encodeJson(SPANS, RESOURCE)
  expect([json.length, sha256(json)]).toEqual([JSON_LENGTH, JSON_SHA256])
})

const PROTO_LENGTH = 1542
const PROTO_SHA256 = '9d0ff88549f849183b5f2a8818a073de815b5335d8a334c45f19fcedc1b7e520'
const JSON_LENGTH = 3220
const JSON_SHA256 = '57317d59163fea83126cb6952fcf0056e97c17f23c34c415feacbb1376102c13'
