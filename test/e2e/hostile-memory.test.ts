/**
 * Issue 42, DESIGN §16: what a valid key's large bodies cost the serving process. 48 concurrent
 * 10 MB chat bodies took a `serve` process from 57 MB to 2.9 GB, and count_tokens cost more than
 * chat for the same body: the body was read in pieces into strings, joined, scanned, parsed, and
 * count_tokens joined each message whole once more. Here 8 concurrent 10 MB bodies (80 MB in
 * flight) go to each endpoint of a real `serve` process (the full 48 × 10 MB and 16 × 9 MB runs
 * are `bun run bench`'s hostile-input row); growth is its peak RSS (VmHWM, reset between the runs)
 * over its RSS before, from /proc. `/healthz` is probed throughout and must answer every time.
 *
 * The bound asserted is 2.25 × the bytes in flight (main: 2.6–3.5 × on chat, 3.4–5 × on count_tokens;
 * now 1.2–2.1 ×). DESIGN's 1.5 × is not yet held on every run: while a request runs the gateway
 * keeps the client's text (pass-through sends it on, byte for byte) and its parsed value, whose
 * strings are copies; the text of a request that no longer needs it is freed only at the next
 * collection. The report of issue 42 says so.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { BUN, REPO } from '../support/cli.ts'
import { PLANS, tempDir, testConfigDoc } from '../support/config-doc.ts'
import { type ServeProcess, spawnServe, writeConfig } from '../support/process.ts'

const ADMIN = 'hostile-memory-admin-token-0123456789abcdef'
const CONCURRENCY = 8
const MB = 10
const IN_FLIGHT_MB = CONCURRENCY * MB
const BOUND = 2.25

let gw: ServeProcess
let key: string
beforeAll(async () => {
  const dir = tempDir()
  const config = writeConfig(
    dir,
    testConfigDoc({
      admin: { token: ADMIN },
      plans: { ...PLANS, free: { rpm: null, rpd: null, models: ['*'] } },
      // The chat bodies are refused (longer than the demo model's context): not toward a suspension.
      limits: { suspension: { count_invalid: false } },
    }),
  )
  gw = await spawnServe(['--config', config, '--db', join(dir, 'db.sqlite'), '--port', '0'])
  const admin = async (path: string, body: unknown) =>
    (await (
      await fetch(`${gw.url}/admin/v1${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    ).json()) as { key: string }
  await admin('/accounts', { name: 'mallory', plan: 'free' })
  key = (await admin('/keys', { account: 'mallory' })).key
  // Each endpoint once with a small body: the tokenizer count_tokens loads is not a body's cost.
  for (const path of ['/v1/chat/completions', '/v1/messages/count_tokens']) {
    const res = await fetch(`${gw.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'demo/echo',
        max_tokens: 16,
        messages: [{ role: 'user', content: 'hi' }],
      }),
    })
    expect(res.status).toBe(200)
    await res.arrayBuffer()
  }
  // A process to start and a tokenizer to load: seconds on a loaded machine.
}, 30_000)
afterAll(() => gw?.kill('SIGKILL'))

async function statusMb(field: 'VmRSS' | 'VmHWM'): Promise<number> {
  const text = await Bun.file(`/proc/${gw.pid}/status`).text()
  return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(text)![1]) / 1024
}

/** CONCURRENCY bodies of MB megabytes to `path` at once; growth in MB and the /healthz probes. */
async function flood(
  path: string,
): Promise<{ growthMb: number; statuses: Record<string, number>; probes: number }> {
  // Lets the idle collector (src/app/serve.ts) run first, then starts the high-water mark afresh.
  await Bun.sleep(1_500)
  writeFileSync(`/proc/${gw.pid}/clear_refs`, '5')
  const before = await statusMb('VmRSS')
  // Niced, in its own process: building and sending 80 MB is the load generator's CPU, not the gateway's.
  const load = Bun.spawn(
    [
      'nice',
      '-n',
      '10',
      BUN,
      join(REPO, 'test/support/body-flood.ts'),
      gw.url,
      key,
      path,
      String(CONCURRENCY),
      String(MB),
      '0',
    ],
    { stdout: 'pipe', stderr: 'inherit' },
  )
  let done = false
  void load.exited.then(() => {
    done = true
  })
  let probes = 0
  while (!done) {
    const res = await fetch(`${gw.url}/healthz`)
    expect(res.status).toBe(200)
    await res.arrayBuffer()
    probes++
    await Bun.sleep(10)
  }
  const { statuses } = JSON.parse(await new Response(load.stdout).text()) as {
    statuses: Record<string, number>
  }
  return { growthMb: (await statusMb('VmHWM')) - before, statuses, probes }
}

describe(`${CONCURRENCY} concurrent ${MB} MB bodies from one key`, () => {
  test(`chat: growth under ${BOUND} × the ${IN_FLIGHT_MB} MB in flight, /healthz answered`, async () => {
    const r = await flood('/v1/chat/completions')
    console.log(
      `chat: +${r.growthMb.toFixed(0)} MB for ${IN_FLIGHT_MB} MB in flight; ${JSON.stringify(r.statuses)}`,
    )
    // Refused as longer than the model's context (the demo answers so), never a 5xx.
    expect(r.statuses).toEqual({ 400: CONCURRENCY })
    expect(r.probes).toBeGreaterThan(0)
    expect(r.growthMb).toBeLessThan(BOUND * IN_FLIGHT_MB)
  }, 60_000)

  test(`count_tokens: the same bound as chat, under ${BOUND} × the ${IN_FLIGHT_MB} MB in flight`, async () => {
    const r = await flood('/v1/messages/count_tokens')
    console.log(
      `count_tokens: +${r.growthMb.toFixed(0)} MB for ${IN_FLIGHT_MB} MB in flight; ${JSON.stringify(r.statuses)}`,
    )
    expect(r.statuses).toEqual({ 200: CONCURRENCY })
    expect(r.probes).toBeGreaterThan(0)
    expect(r.growthMb).toBeLessThan(BOUND * IN_FLIGHT_MB)
  }, 60_000)
})
