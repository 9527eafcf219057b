/**
 * A load generator run as its own process (its 10 MB bodies' memory and CPU are not the test's):
 * `bun body-flood.ts URL KEY PATH CONCURRENCY MB SECONDS [MODEL] [ROUNDS]`. CONCURRENCY clients
 * each post a valid MB-megabyte request (one user message of that many letters, to MODEL,
 * `demo/echo` unless given; to `/v1/embeddings`, an `input` of OpenAI's most items, 2,048, each
 * a string of letters, within the demo model's window, at `dimensions: 8`: an answer within the
 * demo's bound) to PATH, again and again until SECONDS have passed and each has sent
 * ROUNDS (1 unless given; SECONDS 0 and ROUNDS 1: once each). Bodies are built once
 * and shared. Prints one JSON line: `{ statuses, sent }`. Used by test/e2e/hostile/hostile-memory.test.ts
 * and `bun run bench`'s hostile-input rows.
 */
export {}

const [url, key, path, concurrency, mb, seconds, model = 'demo/echo', rounds = '1'] = process.argv.slice(
  2,
) as [string, string, string, string, string, string, string?, string?]
const size = Number(mb) * 1024 * 1024
const embeddings = path === '/v1/embeddings'
const head = embeddings
  ? `{"model": ${JSON.stringify(model)}, "dimensions": 8, "input": ["`
  : `{"model": ${JSON.stringify(model)}, "max_tokens": 16, "messages": [{"role": "user", "content": "`
const tail = embeddings ? '"]}' : '"}]}'
const body = new Uint8Array(size)
body.fill(0x61)
body.set(new TextEncoder().encode(head), 0)
body.set(new TextEncoder().encode(tail), size - tail.length)
if (embeddings) {
  // 2,048 items: a `","` between each, evenly spaced.
  const step = Math.floor((size - head.length - tail.length) / 2048)
  const comma = new TextEncoder().encode('","')
  for (let i = 1; i < 2048; i++) body.set(comma, head.length + i * step)
}
const statuses: Record<string, number> = {}
let sent = 0
const end = performance.now() + Number(seconds) * 1000

async function client(): Promise<void> {
  let round = 0
  do {
    let status = 'error'
    try {
      const res = await fetch(`${url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body,
      })
      await res.arrayBuffer()
      status = String(res.status)
    } catch {
      // A refused body may be answered before it is all sent; the connection then closes.
    }
    sent++
    statuses[status] = (statuses[status] ?? 0) + 1
  } while (performance.now() < end || ++round < Number(rounds))
}

await Promise.all(Array.from({ length: Number(concurrency) }, client))
console.log(JSON.stringify({ statuses, sent }))
