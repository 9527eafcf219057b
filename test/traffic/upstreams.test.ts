/**
 * The console's upstream figures from the `/metrics` exposition: attempts per provider and model
 * by outcome, the provider's failures apart from the request's own faults (the client's), and
 * every circuit's state by name, the open ones first.
 */
import { expect, test } from 'bun:test'
import { upstreamFigures } from '../../src/traffic/upstreams.ts'

const EXPOSITION = `# TYPE switchyard_upstream_attempts_total counter
switchyard_upstream_attempts_total{provider="mock",model="bad",outcome="transient"} 4
switchyard_upstream_attempts_total{provider="mock",model="good",outcome="ok"} 9
switchyard_upstream_attempts_total{provider="strict",model="picky",outcome="request_fault"} 2
switchyard_upstream_attempts_total{provider="strict",model="picky",outcome="content_policy"} 1
switchyard_upstream_attempts_total{provider="strict",model="picky",outcome="ok"} 3
switchyard_upstream_attempts_total{provider="ours",model="odd",outcome="internal"} 2
switchyard_upstream_attempts_total{provider="ours",model="odd",outcome="ok"} 1
# TYPE switchyard_circuit_state gauge
switchyard_circuit_state{provider="mock",key="#0",model="good"} 0
switchyard_circuit_state{provider="mock",key="#1",model="bad"} 2
switchyard_circuit_state{provider="mock",key="#0",model="bad"} 1
`

test('attempts by kind, the client-caused and the gateway-caused apart; circuits by state, the worst first', async () => {
  const { models, circuits } = await upstreamFigures({ render: () => EXPOSITION })
  expect(models).toEqual([
    {
      provider: 'mock',
      model: 'bad',
      attempts: 4,
      failed: 4,
      client_faults: 0,
      gateway_faults: 0,
      failures: { transient: 4 },
    },
    // The gateway's own faults (kind internal) are neither the provider's nor the client's.
    {
      provider: 'ours',
      model: 'odd',
      attempts: 3,
      failed: 0,
      client_faults: 0,
      gateway_faults: 2,
      failures: { internal: 2 },
    },
    {
      provider: 'strict',
      model: 'picky',
      attempts: 6,
      failed: 0,
      client_faults: 3,
      gateway_faults: 0,
      failures: { request_fault: 2, content_policy: 1 },
    },
    {
      provider: 'mock',
      model: 'good',
      attempts: 9,
      failed: 0,
      client_faults: 0,
      gateway_faults: 0,
      failures: {},
    },
  ])
  expect(circuits.map((c) => `${c.provider} ${c.key} ${c.model} ${c.state}`)).toEqual([
    'mock #1 bad open',
    'mock #0 bad half_open',
    'mock #0 good closed',
  ])
})
