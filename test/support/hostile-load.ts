/**
 * A load generator run as its own process (so its work does not delay the test's health probes):
 * `bun hostile-load.ts URL SECONDS KEY...`. Three clients post 10 MB of `[` and 10 MB of `{"a":`
 * in turn for SECONDS. They share the keys in order: a client answered 403 `key_suspended` moves
 * the pool to the next key (an attacker with many keys). Prints one JSON line:
 * `{ statuses, perKey: [{ "400": n, "403": m }, ...] }`.
 */
export {}

const [url, seconds, ...keys] = process.argv.slice(2) as [string, string, ...string[]]
const SIZE = 10 * 1024 * 1024
const bodies = [new Uint8Array(SIZE).fill(0x5b), new TextEncoder().encode('{"a":'.repeat(SIZE / 5))]
const statuses: Record<string, number> = {}
const perKey = keys.map(() => ({}) as Record<string, number>)
let current = 0
let sent = 0
const end = performance.now() + Number(seconds) * 1000

async function client(): Promise<void> {
  while (performance.now() < end) {
    const k = current
    const body = bodies[sent++ % bodies.length]!
    let status = 'error'
    try {
      const res = await fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${keys[k]}`, 'content-type': 'application/json' },
        body,
      })
      const json = (await res.json().catch(() => null)) as { error?: { code?: string } } | null
      status = String(res.status)
      if (res.status === 403 && json?.error?.code === 'key_suspended' && current === k) {
        current = Math.min(k + 1, keys.length - 1)
      }
    } catch {
      // A refused body may be answered before it is all sent; the connection then closes.
    }
    statuses[status] = (statuses[status] ?? 0) + 1
    perKey[k]![status] = (perKey[k]![status] ?? 0) + 1
  }
}

await Promise.all([client(), client(), client()])
console.log(JSON.stringify({ statuses, perKey }))
