/**
 * A load generator run as its own process (so its work does not delay the test's health probes):
 * `bun hostile-load.ts URL SECONDS SUSPENDED KEY...`. Three clients post 10 MB of `[` and 10 MB of
 * `{"a":` in turn for at least SECONDS and until SUSPENDED keys have been answered 403 (a loaded
 * machine sends fewer bodies a second: the count, not the clock, says when the attack has done
 * what the test looks at), for at most 4 × SECONDS. They share the keys in order: a client
 * answered 403 `key_suspended` moves the pool to the next key (an attacker with many keys).
 * Prints one JSON line: `{ statuses, perKey: [{ "400": n, "403": m }, ...], seconds }`.
 */
export {}

const [url, seconds, suspended, ...keys] = process.argv.slice(2) as [string, string, string, ...string[]]
const SIZE = 10 * 1024 * 1024
const bodies = [new Uint8Array(SIZE).fill(0x5b), new TextEncoder().encode('{"a":'.repeat(SIZE / 5))]
const statuses: Record<string, number> = {}
const perKey = keys.map(() => ({}) as Record<string, number>)
let current = 0
let sent = 0
const started = performance.now()
const minEnd = started + Number(seconds) * 1000
const maxEnd = started + 4 * Number(seconds) * 1000
const enough = () => perKey.filter((k) => (k['403'] ?? 0) > 0).length >= Number(suspended)
const going = () => performance.now() < maxEnd && (performance.now() < minEnd || !enough())

async function client(): Promise<void> {
  while (going()) {
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
console.log(JSON.stringify({ statuses, perKey, seconds: (performance.now() - started) / 1000 }))
