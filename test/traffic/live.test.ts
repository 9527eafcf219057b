/**
 * The console's live figures from the `/metrics` exposition: every 429 answered counts as
 * rate-limited — an upstream's rate limit passed on to the client too, which the gateway's own
 * `switchyard_rate_limited_total` does not count — and nothing is both an error and a 429; an
 * error is a 5xx, the client's own 4xx (499 included) are counted apart.
 */
import { expect, test } from 'bun:test'
import { liveFigures } from '../../src/traffic/live.ts'

const EXPOSITION = `# TYPE switchyard_requests_total counter
switchyard_requests_total{surface="chat",model="m",status="200"} 7
switchyard_requests_total{surface="chat",model="m",status="429"} 3
switchyard_requests_total{surface="chat",model="m",status="502"} 1
switchyard_requests_total{surface="admin",model="",status="429"} 5
# TYPE switchyard_rate_limited_total counter
switchyard_rate_limited_total{window="minute"} 2
`

test('an upstream 429 passed on is rate-limited, not an error and not missing', async () => {
  const live = await liveFigures({ render: () => EXPOSITION })
  // 2 refused by the gateway's limits, 1 an upstream's 429: all three; the admin surface's are not traffic.
  expect(live).toMatchObject({ requests_total: 11, rate_limited_total: 3, errors_total: 1 })
})

test("a client's own mistakes (a 400 it caused, 499 when it left, a 403 refusal) are no error, but counted apart", async () => {
  const live = await liveFigures({
    render: () => `# TYPE switchyard_requests_total counter
switchyard_requests_total{surface="chat",model="m",status="200"} 5
switchyard_requests_total{surface="chat",model="m",status="400"} 3
switchyard_requests_total{surface="chat",model="m",status="499"} 2
switchyard_requests_total{surface="chat",model="m",status="403"} 1
switchyard_requests_total{surface="chat",model="m",status="429"} 4
switchyard_requests_total{surface="chat",model="m",status="503"} 1
`,
  })
  expect(live).toMatchObject({
    requests_total: 16,
    errors_total: 1,
    client_errors_total: 6,
    rate_limited_total: 4,
  })
})
