/**
 * @module
 * Soak / fault mode: `minutes` of mixed traffic (see soak-client.ts) through one gateway
 * process. Samples the gateway's RSS over time (growth after a warm-up must stay under 10 %),
 * reports outcomes by class, and checks the books: every request sent was admitted, reached
 * the upstream once, and has its outcome recorded in the request log, `/v1/usage` agrees,
 * and no stream is left open. A gateway that dies is reported, not hidden.
 */
import { Database } from 'bun:sqlite'
import { readFileSync } from 'node:fs'
import { MB, rssBytes } from './proc-stats.ts'
import type { Gateway, Mocks } from './processes.ts'
import { usageRequests } from './processes.ts'
import { fmt, type Row, renderTable, row } from './report.ts'
import { runSoakClient, type SoakClientResult } from './soak-client.ts'

export interface SoakInput {
  gw: Gateway
  mocks: Mocks
  dir: string
  minutes: number
  log: (line: string) => void
}

const RATE = 150
const SAMPLE_MS = 5000
const GROWTH_LIMIT = 0.1

function dbCounts(path: string): { rows: number; recorded: number } {
  const db = new Database(path, { readonly: true })
  try {
    const r = db
      .query<{ rows: number; recorded: number }, []>(
        // Admission counts a request; its log row is written once, with its outcome.
        `SELECT (SELECT COALESCE(SUM(requests), 0) FROM usage_minutes) AS rows,
           (SELECT COUNT(status) FROM requests) AS recorded`,
      )
      .get()!
    return r
  } finally {
    db.close()
  }
}

async function openStreamsGauge(gw: Gateway): Promise<number> {
  try {
    const text = await (await fetch(`${gw.url}/metrics`)).text()
    return Number(/^switchyard_open_streams (\d+)/m.exec(text)?.[1] ?? Number.NaN)
  } catch {
    return Number.NaN
  }
}

export async function runSoak(
  s: SoakInput,
): Promise<{ ok: boolean; markdown: string; doc: Record<string, unknown> }> {
  const { gw, mocks, log } = s
  const durationS = Math.round(s.minutes * 60)
  const warmupS = Math.min(60, Math.max(20, durationS * 0.25))
  const usage0 = await usageRequests(gw)
  const db0 = dbCounts(gw.dbPath)
  const mock0 = mocks.fast.stats.requests
  const t0 = performance.now()
  const samples: Array<{ s: number; rssMB: number }> = []
  let crashedAt = null as number | null
  const sample = () => {
    const t = (performance.now() - t0) / 1000
    if (gw.exitCode() !== null) crashedAt ??= t
    else samples.push({ s: Math.round(t), rssMB: rssBytes(gw.pid) / MB })
  }
  sample()
  const sampler = setInterval(sample, SAMPLE_MS)
  log(`soak: ${s.minutes} min at ${RATE} req/s, warm-up ${warmupS} s, RSS every ${SAMPLE_MS / 1000} s`)
  let client: SoakClientResult
  try {
    client = await runSoakClient({ url: gw.url, key: gw.key, rate: RATE, durationS }, (sent) => {
      const last = samples.at(-1)
      log(
        `  ${Math.round((performance.now() - t0) / 1000)} s: ${sent} sent, RSS ${last ? last.rssMB.toFixed(1) : '?'} MB`,
      )
    })
  } finally {
    clearInterval(sampler)
  }
  sample()
  // Outcomes are written in batches (usage.flush_ms, 200 ms by default).
  await Bun.sleep(1500)
  const alive = gw.exitCode() === null
  const usage = alive ? (await usageRequests(gw)) - usage0 : Number.NaN
  const db1 = dbCounts(gw.dbPath)
  const rows = db1.rows - db0.rows
  const recorded = db1.recorded - db0.recorded
  const mockRequests = mocks.fast.stats.requests - mock0
  const openStreams = alive ? await openStreamsGauge(gw) : Number.NaN

  const after = samples.filter((x) => x.s >= warmupS)
  const base = after[0]?.rssMB ?? Number.NaN
  const peak = Math.max(...after.map((x) => x.rssMB))
  const final = after.at(-1)?.rssMB ?? Number.NaN
  const growth = (peak - base) / base
  const unexpected = Object.values(client.unexpected).reduce((a, b) => a + b, 0)

  const equal = (_: number) => ({
    op: '==' as const,
    value: client.sent,
    text: `= sent (${fmt(client.sent)})`,
  })
  const table: Row[] = [
    row(
      'gateway alive at the end',
      alive ? 'yes' : `no — died at ~${crashedAt?.toFixed(0)} s (exit ${gw.exitCode()})`,
      alive ? 0 : 1,
      {
        op: '==',
        value: 0,
        text: 'yes',
      },
    ),
    row('requests sent', `${fmt(client.sent)} (${fmt(client.achievedRate, 1)} req/s)`, client.sent, null),
    row('outcomes not matching their kind', fmt(unexpected), unexpected, { op: '==', value: 0, text: '0' }),
    row('admitted (usage counters)', fmt(rows), rows, equal(rows)),
    row('outcomes recorded (request log rows)', fmt(recorded), recorded, equal(recorded)),
    row('/v1/usage last_24h.requests (delta)', fmt(usage), usage, equal(usage)),
    row('upstream requests seen by the mock', fmt(mockRequests), mockRequests, equal(mockRequests)),
    row('open streams after the soak (/metrics gauge)', fmt(openStreams), openStreams, {
      op: '==',
      value: 0,
      text: '0',
    }),
    row(
      `RSS growth after warm-up (${warmupS} s)`,
      `${fmt(growth * 100, 1)} % (at warm-up ${fmt(base, 1)} MB, peak ${fmt(peak, 1)} MB, final ${fmt(final, 1)} MB)`,
      growth,
      { op: '<=', value: GROWTH_LIMIT, text: '< 10 %' },
    ),
  ]
  const outcomeTable = [
    '| request kind → outcome | count | expected |',
    '|---|---|---|',
    ...Object.entries(client.outcomes)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, n]) => `| ${k} | ${fmt(n)} | ${client.unexpected[k] ? '**no**' : 'yes'} |`),
  ].join('\n')
  // At most ~25 samples in the text (all of them are in the JSON).
  const every = Math.max(1, Math.ceil(samples.length / 25))
  const rssLine = samples
    .filter((_, i) => i % every === 0 || i === samples.length - 1)
    .map((x) => `${x.s}s ${x.rssMB.toFixed(0)}`)
    .join(', ')
  const warnings = logSummary(gw.logPath)
  const markdown = [
    `\nSoak: ${s.minutes} min, ${RATE} req/s open loop, gateway ${gw.mode}.`,
    '',
    renderTable(table),
    '',
    outcomeTable,
    '',
    `RSS samples (s MB, every ${(every * SAMPLE_MS) / 1000} s): ${rssLine}`,
    '',
    `Gateway log: ${
      Object.entries(warnings)
        .map(([k, n]) => `${k} ${n}`)
        .join(', ') || 'empty'
    }`,
  ].join('\n')
  const ok = alive && table.every((r) => r.result !== 'miss' || r.metric.startsWith('RSS growth'))
  return {
    ok,
    markdown,
    doc: {
      minutes: s.minutes,
      rate: RATE,
      warmupS,
      client,
      rows: table,
      samples,
      crashedAt,
      logLevels: warnings,
    },
  }
}

/** Log lines by level and message, e.g. `warn upstream failure: 812`. */
function logSummary(path: string): Record<string, number> {
  const out: Record<string, number> = {}
  let text = ''
  try {
    text = readFileSync(path, 'utf8')
  } catch {
    return out
  }
  for (const line of text.split('\n')) {
    if (!line) continue
    let k = 'unparsed line'
    try {
      const j = JSON.parse(line) as { level?: string; msg?: string }
      k = `${j.level} "${j.msg}"`
    } catch {}
    out[k] = (out[k] ?? 0) + 1
  }
  return out
}
