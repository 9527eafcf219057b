/**
 * `/metrics` under `serve --workers 2`, parsed with a real Prometheus text-format parser: every
 * scrape, whichever process answers it, reports the whole server.
 */
import { afterAll, expect, test } from 'bun:test'
import { getMetricsFromIterator, type PromHistogramData, type PromMetric } from 'prom2javascript'
import { cli } from '../support/cli.ts'
import { tempDir, testConfigDoc } from '../support/config-doc.ts'
import { type ServeProcess, spawnServe, writeConfig } from '../support/process.ts'

const procs: ServeProcess[] = []
afterAll(() => {
  for (const p of procs) p.proc.kill('SIGKILL')
})

/** A new connection each time, so the kernel spreads them over both processes. */
const close = { connection: 'close' }

type Families = Map<string, PromMetric>
interface Sample {
  labels: Record<string, string>
  value?: number
  count?: number
  buckets?: Record<string, number>
}
const samples = (f: PromMetric | undefined) => (f?.data ?? []) as Sample[]

async function scrape(url: string): Promise<Families> {
  const res = await fetch(`${url}/metrics`, { headers: close })
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toContain('text/plain')
  const text = await res.text()
  return new Map(Object.entries(await getMetricsFromIterator(text.split('\n')[Symbol.iterator]())))
}

const seriesKey = (labels: Record<string, string> = {}) => JSON.stringify(Object.entries(labels).sort())

/** Every counter sample and histogram count/bucket, by series, as numbers. */
function counterValues(families: Families): Map<string, number> {
  const out = new Map<string, number>()
  for (const [name, f] of families) {
    for (const m of samples(f)) {
      const k = `${name}${seriesKey(m.labels)}`
      if (f.type === 'counter') out.set(k, m.value!)
      if (f.type === 'histogram') {
        out.set(`${k}:count`, m.count!)
        for (const [le, v] of Object.entries(m.buckets ?? {})) out.set(`${k}:le=${le}`, v)
      }
    }
  }
  return out
}

const sum = (f: PromMetric | undefined, where: Record<string, string>) =>
  samples(f)
    .filter((m) => Object.entries(where).every(([k, v]) => m.labels[k] === v))
    .reduce((n, m) => n + (m.value ?? m.count ?? 0), 0)

test('/metrics under --workers 2, scraped 20 times: no counter decreases, histograms parse, sums equal the requests sent', async () => {
  const dir = tempDir()
  const base = ['--config', writeConfig(dir, testConfigDoc())]
  expect((await cli(['accounts', 'create', 'm', '--plan', 'unlimited', ...base])).code).toBe(0)
  const key = (await cli(['keys', 'create', 'm', '--json', ...base])).json().key as string
  const serve = await spawnServe(['--workers', '2', '--port', '0', ...base])
  procs.push(serve)

  const sent = { ok: 0, stream: 0, unauthorized: 0 }
  const send = async (i: number) => {
    const stream = i % 3 === 0
    const bad = i % 7 === 0
    const res = await fetch(`${serve.url}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        ...close,
        authorization: `Bearer ${bad ? 'sk-sy-wrong' : key}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        model: 'demo/echo',
        stream,
        messages: [{ role: 'user', content: `hello ${i}` }],
      }),
    })
    await res.arrayBuffer()
    if (bad) sent.unauthorized++
    else if (stream) sent.stream++
    else sent.ok++
  }

  let previous = new Map<string, number>()
  let i = 0
  let scrapes = 0
  for (let round = 0; round < 20; round++) {
    await Promise.all(Array.from({ length: 4 }, () => send(i++)))
    // A request is counted once its response has gone out, which its client may see first:
    // scrape again (briefly) until the last ones are in; every scrape is checked.
    let families: Families
    for (let tries = 0; ; tries++) {
      families = await scrape(serve.url)
      scrapes++
      const now = counterValues(families)
      expect(now.size).toBeGreaterThan(0)
      for (const [k, v] of previous) {
        if (!((now.get(k) ?? 0) >= v)) throw new Error(`counter ${k} went back from ${v} to ${now.get(k)}`)
      }
      previous = now
      const counted = sum(families.get('switchyard_requests_total'), { surface: 'chat' })
      if (counted === sent.ok + sent.stream + sent.unauthorized || tries === 40) break
      await Bun.sleep(25)
    }

    // Both processes are in every answer, whichever one answered.
    expect(sum(families.get('switchyard_processes'), {})).toBe(2)
    const chat = families.get('switchyard_requests_total')
    expect(sum(chat, { surface: 'chat', status: '200' })).toBe(sent.ok + sent.stream)
    expect(sum(chat, { surface: 'chat', status: '401' })).toBe(sent.unauthorized)

    const latency = families.get('switchyard_request_duration_seconds')!
    expect(latency.type).toBe('histogram')
    for (const m of latency.data as PromHistogramData[]) {
      const buckets = Object.entries(m.buckets).map(
        ([le, v]) => [le === '+Inf' ? Infinity : Number(le), v] as const,
      )
      buckets.sort((a, b) => a[0] - b[0])
      expect(buckets.at(-1)![0]).toBe(Number.POSITIVE_INFINITY)
      for (let b = 1; b < buckets.length; b++)
        expect(buckets[b]![1]).toBeGreaterThanOrEqual(buckets[b - 1]![1])
      expect(m.count).toBe(buckets.at(-1)![1])
      expect(m.sum).toBeGreaterThan(0)
    }
    expect(sum(latency, { surface: 'chat' })).toBe(sent.ok + sent.stream + sent.unauthorized)
    const ttft = families.get('switchyard_time_to_first_token_seconds')!
    expect(sum(ttft, { surface: 'chat', model: 'demo/echo' })).toBe(sent.stream)
    expect(sum(families.get('switchyard_tokens_total'), { type: 'completion' })).toBeGreaterThan(0)
  }
  expect(sent.ok + sent.stream + sent.unauthorized).toBe(80)
  expect(scrapes).toBeGreaterThanOrEqual(20)
}, 60_000)
