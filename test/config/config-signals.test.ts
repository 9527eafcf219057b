/**
 * `alerts` and `telemetry` (DESIGN §15): defaults, `${ENV}` in them, unknown keys refused with
 * their path, and the standard OTEL_* variables overlaying the file (an invalid one named).
 */
import { expect, test } from 'bun:test'
import { parseConfig } from '../../src/config/index.ts'
import { testConfigDoc } from '../support/config-doc.ts'
import { problems } from './problems.ts'

const HOOK = {
  url: 'https://hooks.example.com/sy',
  secret: '${HOOK_SECRET}',
  events: ['budget.threshold' as const],
}

test('alerts: defaults, ${ENV} in a secret, format per webhook', () => {
  const c = parseConfig(
    testConfigDoc({
      alerts: { webhooks: [HOOK, { ...HOOK, url: 'https://hooks.slack.com/x', format: 'slack' }] },
    }),
    'test',
    { HOOK_SECRET: 'a-secret-of-16-chars+' },
  )
  expect(c.alerts.webhooks[0]).toEqual({ ...HOOK, secret: 'a-secret-of-16-chars+', format: 'json' })
  expect(c.alerts.webhooks[1]!.format).toBe('slack')
  expect(c.alerts).toMatchObject({
    planExpiringDays: 3,
    backoffMs: 5_000,
    maxBackoffMs: 600_000,
    pollMs: 1_000,
  })
  expect(parseConfig(testConfigDoc(), 'test', {}).alerts.webhooks).toEqual([])
  expect(parseConfig(testConfigDoc(), 'test', {}).telemetry.tracesUrl).toBeNull()
})

test('alerts and telemetry: an unknown key, an unknown event, a short secret — each named by its path', () => {
  const found = problems(() =>
    parseConfig(
      testConfigDoc({
        alerts: { webhooks: [{ ...HOOK, secret: 'short', events: ['budget.treshold'], retries: 3 }] },
        telemetry: { otlp_endpoint: 'http://127.0.0.1:4318', sampel_ratio: 0.5 },
      }),
      'test',
      {},
    ),
  ).map((p) => p.path)
  expect(found).toEqual(
    expect.arrayContaining([
      '/alerts/webhooks/0/secret',
      '/alerts/webhooks/0/events/0',
      '/alerts/webhooks/0/retries',
      '/telemetry/sampel_ratio',
    ]),
  )
})

test('telemetry: the file, then the OTEL_* variables over it', () => {
  const doc = testConfigDoc({
    telemetry: { otlp_endpoint: 'http://127.0.0.1:4318/', headers: { 'x-a': '1' }, sample_ratio: 0.5 },
  })
  expect(parseConfig(doc, 'test', {}).telemetry).toEqual({
    tracesUrl: 'http://127.0.0.1:4318/v1/traces',
    headers: { 'x-a': '1' },
    protocol: 'http/protobuf',
    sampleRatio: 0.5,
    exportIntervalMs: 1_000,
  })
  const env = {
    OTEL_EXPORTER_OTLP_ENDPOINT: 'https://cloud.langfuse.com/api/public/otel',
    OTEL_EXPORTER_OTLP_HEADERS: 'Authorization=Basic%20cGstbGY6c2stbGY=,x-b=2',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_TRACES_SAMPLER_ARG: '0.25',
  }
  expect(parseConfig(doc, 'test', env).telemetry).toEqual({
    tracesUrl: 'https://cloud.langfuse.com/api/public/otel/v1/traces',
    headers: { 'x-a': '1', Authorization: 'Basic cGstbGY6c2stbGY=', 'x-b': '2' },
    protocol: 'http/json',
    sampleRatio: 0.25,
    exportIntervalMs: 1_000,
  })
  const bad = problems(() =>
    parseConfig(testConfigDoc(), 'test', {
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      OTEL_TRACES_SAMPLER_ARG: '2',
    }),
  )
  expect(bad.map((p) => p.path)).toEqual(['/telemetry/protocol', '/telemetry/sample_ratio'])
  expect(bad[0]!.message).toContain('OTEL_EXPORTER_OTLP_PROTOCOL')
})

test('an OTLP endpoint variable that is not a URL is refused without echoing it (it may carry credentials)', () => {
  const bad = problems(() =>
    parseConfig(testConfigDoc(), 'test', { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318 user:s3cret-pass' }),
  )
  expect(bad.map((p) => p.path)).toEqual(['/telemetry/otlp_endpoint'])
  expect(bad[0]!.message).toContain('OTEL_EXPORTER_OTLP_ENDPOINT')
  expect(bad[0]!.message).not.toContain('s3cret-pass')
})

test("alerts: a second webhook with the same URL is refused (it would be signed with the first one's secret)", () => {
  const found = problems(() =>
    parseConfig(
      testConfigDoc({
        alerts: {
          webhooks: [HOOK, { ...HOOK, secret: 'another-secret-of-16+', events: ['circuit.opened'] }],
        },
      }),
      'test',
      { HOOK_SECRET: 'a-secret-of-16-chars+' },
    ),
  )
  expect(found.map((p) => p.path)).toEqual(['/alerts/webhooks/1/url'])
  expect(found[0]!.message).toContain('alerts.webhooks[0]')
})
