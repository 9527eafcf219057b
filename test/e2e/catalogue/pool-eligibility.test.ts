/**
 * A virtual model's pick is made among the members the request may use (DESIGN §13): a member the
 * plan or the key does not reach, or that does not serve the operation, never takes a turn of the
 * smooth round-robin nor a session's place — it was picked first and filtered after, so its turns
 * went to the next member by weight and the others' shares were skewed (1:1:1 over three members
 * with the first out of reach answered 3:1, not 1:1).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { rendezvous, sessionHash } from '../../../src/util/affinity.ts'
import { bearer, startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'

const model = (name: string) => ({
  name,
  context_window: 8192,
  max_output_tokens: 256,
  features: ['streaming', 'system_messages'],
})

let gw: TestGateway
let key: string
beforeAll(async () => {
  gw = await startGateway({
    doc: testConfigDoc({
      providers: [{ prefix: 'd', kind: 'demo', models: ['a', 'b', 'c'].map(model) }],
      aliases: [{ id: 'team/trio', to: ['d/a', 'd/b', 'd/c'].map((m) => ({ model: m })), listed: false }],
      plans: { bc: { rpm: null, rpd: null, models: ['d/b', 'd/c'] } },
      default_plan: 'bc',
    }),
  })
  key = (await gw.key('pool-eligibility', 'bc')).key
})
afterAll(() => gw.stop())

async function answered(n: number, headers: Record<string, string> = {}): Promise<string[]> {
  const out: string[] = []
  for (let i = 0; i < n; i++) {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...bearer(key), 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ model: 'team/trio', messages: [{ role: 'user', content: 'hi' }] }),
    })
    expect(res.status).toBe(200)
    out.push(((await res.json()) as { model: string }).model)
  }
  return out
}

test('the round-robin turns go to the members the plan reaches, evenly', async () => {
  expect(await answered(6)).toEqual(['d/b', 'd/c', 'd/b', 'd/c', 'd/b', 'd/c'])
})

test("a session's member is its rendezvous rank among the reachable members (an unreachable first choice never sends it to the next by weight)", async () => {
  const members = ['d/a', 'd/b', 'd/c']
  for (let s = 0; s < 12; s++) {
    const id = `session-${s}`
    const [first, again] = await answered(2, { 'session-id': id })
    expect(again).toBe(first!)
    expect(first).toBe(members[rendezvous(sessionHash(id), [1, 1, 1], (i) => i !== 0)!]!)
  }
})
