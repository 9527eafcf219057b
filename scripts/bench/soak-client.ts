/**
 * @module
 * The soak's traffic: an open-loop mix of JSON and streamed requests, upstream faults, slow
 * streams and client aborts, sent at a fixed rate through the gateway. Every request's outcome
 * is classified (`kind → status code` or `kind → 200 + stream error code`, `client abort`, ...)
 * and checked against what that kind must produce. Runs as its own process.
 */
import { join } from 'node:path'
import { runChild } from './processes.ts'
import { chatBody, emitResult } from './workload.ts'

interface Args {
  url: string
  key: string
  rate: number
  durationS: number
}

interface Kind {
  name: string
  weight: number
  model: string
  stream: boolean
  /** Abort after a random delay in [min, max) ms. */
  abortMs?: [number, number]
  /** Does this outcome class match what the kind must produce? */
  expected: (outcome: string) => boolean
}

const ok = (o: string) => o === '200'
const upstreamFault = (o: string) => /^(502|504) upstream_|^200 \+ stream error upstream_/.test(o)
const aborted = (o: string) => o === 'client abort'

export const KINDS: Kind[] = [
  { name: 'json', weight: 35, model: 'mock/bench', stream: false, expected: ok },
  { name: 'stream', weight: 25, model: 'mock/bench', stream: true, expected: ok },
  { name: 'fault-500 json', weight: 4, model: 'mock/fault-500', stream: false, expected: upstreamFault },
  { name: 'fault-500 stream', weight: 4, model: 'mock/fault-500', stream: true, expected: upstreamFault },
  { name: 'cut json', weight: 4, model: 'mock/fault-cut-stream', stream: false, expected: upstreamFault },
  { name: 'cut stream', weight: 4, model: 'mock/fault-cut-stream', stream: true, expected: upstreamFault },
  {
    name: 'slow stream (20 × 200 ms)',
    weight: 10,
    model: 'mock/slow-stream-200ms',
    stream: true,
    expected: ok,
  },
  {
    name: 'abort mid-stream',
    weight: 7,
    model: 'mock/slow-stream-200ms',
    stream: true,
    abortMs: [300, 1500],
    expected: aborted,
  },
  {
    name: 'abort before headers',
    weight: 7,
    model: 'mock/slow-headers-2000ms',
    stream: false,
    abortMs: [200, 1000],
    expected: aborted,
  },
]

export interface SoakClientResult {
  sent: number
  byKind: Record<string, number>
  /** `kind → outcome` → count. */
  outcomes: Record<string, number>
  unexpected: Record<string, number>
  achievedRate: number
}

export function runSoakClient(args: Args, onProgress: (sent: number) => void): Promise<SoakClientResult> {
  return runChild<SoakClientResult>(
    join(import.meta.dir, 'soak-client.ts'),
    args,
    (args.durationS + 120) * 1000,
    (l) => {
      if (l.startsWith('SENT ')) onProgress(Number(l.slice(5)))
    },
  )
}

/** Deterministic mix: a weighted round-robin, so short soaks still see every kind. */
function schedule(): Kind[] {
  const out: Kind[] = []
  const credit = KINDS.map(() => 0)
  const total = KINDS.reduce((a, k) => a + k.weight, 0)
  for (let i = 0; i < total; i++) {
    KINDS.forEach((k, j) => {
      credit[j]! += k.weight
    })
    let best = 0
    for (let j = 1; j < KINDS.length; j++) if (credit[j]! > credit[best]!) best = j
    credit[best]! -= total
    out.push(KINDS[best]!)
  }
  return out
}

async function outcomeOf(res: Response, stream: boolean): Promise<string> {
  const text = await res.text()
  if (res.status !== 200) {
    let code = 'no_code'
    try {
      code = (JSON.parse(text) as { error?: { code?: string } }).error?.code ?? 'no_code'
    } catch {}
    return `${res.status} ${code}`
  }
  if (!stream) return '200'
  const err = /^data: (\{"error".*)$/m.exec(text)
  if (err) {
    try {
      return `200 + stream error ${(JSON.parse(err[1]!) as { error: { code?: string } }).error.code ?? 'no_code'}`
    } catch {
      return '200 + stream error (unparsable)'
    }
  }
  return text.includes('data: [DONE]') ? '200' : '200 without [DONE]'
}

async function main(a: Args): Promise<void> {
  const mix = schedule()
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${a.key}` }
  const url = `${a.url}/v1/chat/completions`
  const outcomes: Record<string, number> = {}
  const unexpected: Record<string, number> = {}
  const byKind: Record<string, number> = {}
  const bump = (m: Record<string, number>, k: string) => {
    m[k] = (m[k] ?? 0) + 1
  }
  const pending = new Set<Promise<void>>()
  let rnd = 12345
  const random = () => {
    rnd = (rnd * 1103515245 + 12345) & 0x7fffffff
    return rnd / 0x80000000
  }

  const one = async (k: Kind, abortAfter: number | null): Promise<void> => {
    const ac = new AbortController()
    const timer = abortAfter === null ? undefined : setTimeout(() => ac.abort(), abortAfter)
    let outcome: string
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers,
        body: chatBody(k.model, k.stream),
        signal: ac.signal,
      })
      outcome = await outcomeOf(res, k.stream)
    } catch (err) {
      outcome = ac.signal.aborted
        ? 'client abort'
        : `network ${(err as Error).name}: ${(err as Error).message}`.slice(0, 120)
    } finally {
      clearTimeout(timer)
    }
    bump(outcomes, `${k.name} → ${outcome}`)
    if (!k.expected(outcome)) bump(unexpected, `${k.name} → ${outcome}`)
  }

  const interval = 1000 / a.rate
  const total = Math.round(a.rate * a.durationS)
  const t0 = performance.now()
  for (let i = 0; i < total; i++) {
    const wait = t0 + i * interval - performance.now()
    if (wait > 0) await Bun.sleep(wait)
    const k = mix[i % mix.length]!
    bump(byKind, k.name)
    const abortAfter = k.abortMs ? k.abortMs[0] + random() * (k.abortMs[1] - k.abortMs[0]) : null
    const p = one(k, abortAfter)
    pending.add(p)
    void p.finally(() => pending.delete(p))
    if (i % Math.round(a.rate * 5) === 0) process.stdout.write(`SENT ${i}\n`)
  }
  const sentS = (performance.now() - t0) / 1000
  await Promise.all(pending)
  emitResult({
    sent: total,
    byKind,
    outcomes,
    unexpected,
    achievedRate: total / sentS,
  } satisfies SoakClientResult)
}

if (import.meta.main) await main(JSON.parse(process.argv[2]!) as Args)
