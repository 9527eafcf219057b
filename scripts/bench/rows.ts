/**
 * @module
 * Turns the scenario results into the table's rows, each against its target from the
 * benchmark issue (none of them is a unit test: a miss is reported, not failed).
 */
import type { HostileInputResult } from './hostile-input.ts'
import type { MicroResult } from './micro.ts'
import { MB } from './proc-stats.ts'
import { fmt, fmtSeries, type Row, row, series, type Target } from './report.ts'
import type { ClosedCell, Forwarded, Mode, OpenCell, StreamsOutcome } from './scenarios.ts'
import type { UsageVolumeResult } from './usage-volume.ts'

export const TARGETS = {
  ratioNonStream: { op: '>=', value: 0.25, text: '≥ 0.25 × direct' },
  ratioStream: { op: '>=', value: 0.5, text: '≥ 0.50 × direct' },
  addedP50: { op: '<=', value: 0.3, text: '≤ 0.30 ms' },
  addedP99: { op: '<=', value: 1.0, text: '≤ 1.0 ms' },
  /** Issue 12: CPU per request at c64 — the saturated cost, where a core is the limit. */
  cpuNonStream: { op: '<=', value: 80, text: '≤ 80 µs' },
  cpuStream: { op: '<=', value: 100, text: '≤ 100 µs' },
  rssLoad: { op: '<=', value: 80, text: '≤ 80 MB' },
  rssStreams: { op: '<=', value: 150, text: '≤ 150 MB' },
  zero: { op: '==', value: 0, text: '0' },
} satisfies Record<string, Target>

/** p50 / p99 of the direct and the gateway runs of one scenario, as information rows. */
function latencyRows(
  what: string,
  direct: Array<{ p50Ms: number; p99Ms: number }>,
  gateway: Array<{ p50Ms: number; p99Ms: number }>,
): Row[] {
  return (
    [
      ['direct', direct],
      ['gateway', gateway],
    ] as const
  ).map(([side, runs]) => {
    const p50 = series(runs.map((r) => r.p50Ms))
    const p99 = series(runs.map((r) => r.p99Ms))
    return row(
      `latency p50 / p99 ${side}, ${what}`,
      `${fmtSeries(p50, 2, 'ms')} / ${fmtSeries(p99, 2, 'ms')}`,
      0,
      null,
    )
  })
}

const label = (mode: Mode | 'messages') =>
  mode === 'stream'
    ? 'stream'
    : mode === 'messages'
      ? 'messages (/v1/messages → anthropic, pass-through stream)'
      : 'non-stream'

export function closedRows(cells: Record<string, ClosedCell>): Row[] {
  const rows: Row[] = []
  for (const [key, cell] of Object.entries(cells)) {
    const [mode, c] = key.split('/') as [Mode | 'messages', string]
    const what = `${label(mode)}, ${c}`
    const d = series(cell.direct.map((r) => r.rps))
    const g = series(cell.gateway.map((r) => r.rps))
    const ratios = series(cell.gateway.map((r, i) => r.rps / cell.direct[i]!.rps))
    const ratio = g.median / d.median
    const target = c === 'c64' ? (mode === 'nonstream' ? TARGETS.ratioNonStream : TARGETS.ratioStream) : null
    rows.push(row(`throughput direct, ${what}`, fmtSeries(d, 0, 'req/s'), d.median, null))
    rows.push(row(`throughput gateway, ${what}`, fmtSeries(g, 0, 'req/s'), g.median, null))
    rows.push(
      row(
        `gateway/direct throughput, ${what}`,
        `${fmt(ratio, 3)}${ratios.values.length > 1 ? ` (per run ${fmt(ratios.min, 3)}–${fmt(ratios.max, 3)})` : ''}`,
        ratio,
        target,
      ),
    )
    rows.push(...latencyRows(what, cell.direct, cell.gateway))
    const cpu = series(cell.gatewayCpuUs)
    // The issue sets CPU targets at c64 (saturated); c16 is shown for the trend.
    const cpuTarget = c === 'c64' ? (mode === 'nonstream' ? TARGETS.cpuNonStream : TARGETS.cpuStream) : null
    rows.push(row(`gateway CPU per request, ${what}`, fmtSeries(cpu, 0, 'µs'), cpu.median, cpuTarget))
    const errors = [...cell.direct, ...cell.gateway].reduce((a, r) => a + r.errors, 0)
    if (errors) rows.push(row(`errors (non-2xx, socket), ${what}`, fmt(errors), errors, TARGETS.zero))
  }
  return rows
}

export function openRows(cells: Record<Mode, OpenCell>, rate: number): Row[] {
  const rows: Row[] = []
  for (const [mode, cell] of Object.entries(cells) as [Mode, OpenCell][]) {
    const what = `${mode === 'stream' ? 'stream first byte' : 'non-stream'}, ${rate} req/s open loop, mock 50 ms`
    const added = (q: 'p50Ms' | 'p99Ms') => series(cell.gateway.map((g, i) => g[q] - cell.direct[i]![q]))
    const a50 = added('p50Ms')
    const a99 = added('p99Ms')
    rows.push(row(`added latency p50, ${what}`, fmtSeries(a50, 2, 'ms'), a50.median, TARGETS.addedP50))
    rows.push(row(`added latency p99, ${what}`, fmtSeries(a99, 2, 'ms'), a99.median, TARGETS.addedP99))
    rows.push(...latencyRows(what, cell.direct, cell.gateway))
    const lag = series(cell.gateway.map((r) => r.sendLagP99Ms))
    rows.push(row(`generator send lag p99 (noise floor), ${label(mode)}`, fmtSeries(lag, 2, 'ms'), 0, null))
    const cpu = series(cell.gatewayCpuUs)
    rows.push(
      row(
        `gateway CPU per request, ${label(mode)}, ${rate} req/s`,
        fmtSeries(cpu, 0, 'µs'),
        cpu.median,
        // No target at 200 req/s (the issue's are at c64): an idle-woken request's cost, shown as is.
        null,
      ),
    )
    const errors = [...cell.direct, ...cell.gateway].reduce((a, r) => a + r.errors, 0)
    if (errors) rows.push(row(`errors (open loop), ${label(mode)}`, fmt(errors), errors, TARGETS.zero))
  }
  return rows
}

export function memoryRows(
  rssAfterLoad: number,
  s: StreamsOutcome,
  supervisorRss: number | null,
  rssRightAfter: number,
): Row[] {
  const n = s.client.requested
  const allOpen = { op: '>=', value: n, text: `all ${n}` } satisfies Target
  const perStream = (s.rssOpenBytes - s.rssBeforeBytes) / Math.max(1, s.client.open)
  return [
    row(
      'gateway RSS right after the last request of the load runs',
      `${fmt(rssRightAfter / MB, 1)} MB`,
      rssRightAfter / MB,
      null,
    ),
    row(
      'gateway RSS after the load runs (3 s idle: one full collection)',
      `${fmt(rssAfterLoad / MB, 1)} MB`,
      rssAfterLoad / MB,
      TARGETS.rssLoad,
    ),
    row(
      `slow streams relayed at once (first byte at the client)`,
      `${fmt(s.client.open)} / ${fmt(n)} (upstream open: ${fmt(s.upstreamOpen)})`,
      s.client.open,
      allOpen,
    ),
    row(
      `gateway RSS with ${fmt(n)} slow streams open`,
      `${fmt(s.rssOpenBytes / MB, 1)} MB (before ${fmt(s.rssBeforeBytes / MB, 1)} MB, ≈ ${fmt(perStream / 1024, 0)} KB per open stream)`,
      s.rssOpenBytes / MB,
      TARGETS.rssStreams,
    ),
    ...(supervisorRss === null
      ? []
      : [
          row(
            'supervisor process RSS (serve re-runs itself with its env set; not in the rows above)',
            `${fmt(supervisorRss / MB, 1)} MB`,
            supervisorRss / MB,
            null,
          ),
        ]),
    row(
      'upstream streams cancelled after the clients aborted',
      `${fmt(s.upstreamAborted)} / ${fmt(s.upstreamStarted)}`,
      s.upstreamAborted,
      { op: '>=', value: s.upstreamStarted, text: 'all started' },
    ),
  ]
}

export function microRows(m: MicroResult): Row[] {
  return [
    row(
      'auth per request (authenticate: hash + cached key lookup + plan)',
      `${fmt(m.authUs, 1)} µs`,
      m.authUs,
      null,
    ),
    row(
      'auth per request, cache off (hash + store key lookup + plan: a cache miss)',
      `${fmt(m.authUncachedUs, 1)} µs`,
      m.authUncachedUs,
      null,
    ),
    row(
      'limiter per request (store.admit, unlimited plan, one at a time)',
      `${fmt(m.admitUs, 1)} µs`,
      m.admitUs,
      null,
    ),
    row(
      'limiter per request, 16 arriving together (group commit)',
      `${fmt(m.admitBatchedUs, 1)} µs`,
      m.admitBatchedUs,
      null,
    ),
    row(
      'usage recording per request (recorder.record + batched flush)',
      `${fmt(m.recordUs, 1)} µs`,
      m.recordUs,
      null,
    ),
    row('auth + limiter + usage, sum (one at a time)', `${fmt(m.sumUs, 1)} µs`, m.sumUs, null),
    row(
      'limiter per request with rpm/rpd set (window counts)',
      `${fmt(m.admitLimitedUs, 1)} µs`,
      m.admitLimitedUs,
      null,
    ),
    row(
      'tokens and money: store.admit, plain / metered (tpm + tpd + budget), 16 together, CPU',
      `${fmt(m.tokens.plainBatchedUs, 1)} / ${fmt(m.tokens.meteredBatchedUs, 1)} µs (+${fmt(m.tokens.meteredBatchedUs - m.tokens.plainBatchedUs, 1)})`,
      m.tokens.meteredBatchedUs - m.tokens.plainBatchedUs,
      null,
    ),
    row(
      'tokens and money: store.admit one at a time, plain / metered, CPU',
      `${fmt(m.tokens.plainUs, 1)} / ${fmt(m.tokens.meteredUs, 1)} µs (+${fmt(m.tokens.meteredUs - m.tokens.plainUs, 1)})`,
      m.tokens.meteredUs - m.tokens.plainUs,
      null,
    ),
    row(
      'tokens and money: usage flush per request, outcomes / with their settlements, CPU',
      `${fmt(m.tokens.completeUs, 1)} / ${fmt(m.tokens.completeSettledUs, 1)} µs (+${fmt(m.tokens.completeSettledUs - m.tokens.completeUs, 1)})`,
      m.tokens.completeSettledUs - m.tokens.completeUs,
      null,
    ),
    row(
      `stream relay in-process, one stream of ${m.stream.events} events: parse / + decode / + SSE writer`,
      `${fmt(m.stream.parseUs, 0)} / ${fmt(m.stream.decodeUs, 0)} / ${fmt(m.stream.relayUs, 0)} µs (${fmt(m.stream.relayUs / m.stream.events, 1)} µs per event)`,
      m.stream.relayUs,
      null,
    ),
    row(
      `the same stream in one stage (StreamPlan: parse + decode + encode in one pull)`,
      `${fmt(m.stream.oneStageUs, 0)} µs (${fmt(m.stream.oneStageUs / m.stream.events, 1)} µs per event)`,
      m.stream.oneStageUs,
      null,
    ),
    row(
      `the same stream passed through, chat → openai (one stage: byte relay, ChatBytes)`,
      `${fmt(m.stream.chatForwardUs, 0)} µs`,
      m.stream.chatForwardUs,
      null,
    ),
    row(
      `byte relay in-process: messages → anthropic (${m.stream.messagesEvents} events) / responses → Responses (${m.stream.responsesEvents} events)`,
      `${fmt(m.stream.messagesUs, 0)} / ${fmt(m.stream.responsesUs, 0)} µs`,
      m.stream.responsesUs,
      null,
    ),
  ]
}

export function forwardingRows(f: Forwarded, clientClosed: number): Row[] {
  const rows = [
    row(
      'mock requests == gateway admitted (runs that wait for every answer)',
      `${fmt(f.drained.mockRequests)} == ${fmt(f.drained.admitted)}`,
      f.drained.mockRequests - f.drained.admitted,
      { op: '==', value: 0, text: 'equal' },
    ),
  ]
  if (f.cutOff.admitted > 0) {
    const gap = f.cutOff.admitted - f.cutOff.mockRequests
    rows.push(
      row(
        'wrk runs: admitted − mock requests (cut off in flight at the end, ≤ 499s recorded)',
        `${fmt(f.cutOff.admitted)} − ${fmt(f.cutOff.mockRequests)} = ${fmt(gap)} (499s: ${fmt(clientClosed)})`,
        gap >= 0 && gap <= clientClosed ? 0 : 1,
        { op: '==', value: 0, text: '0 ≤ gap ≤ 499s' },
      ),
    )
  }
  return rows
}

export function usageVolumeRows(u: UsageVolumeResult): Row[] {
  return [
    row(
      `GET /v1/usage, account with ${fmt(u.rows)} requests in the last 24 h (over HTTP)`,
      fmtSeries(u.usageMs, 2, 'ms'),
      u.usageMs.median,
      { op: '<=', value: 20, text: '≤ 20 ms' },
    ),
    row(
      'same figures by scanning the request log (how /v1/usage answered before its counters)',
      fmtSeries(u.logScanMs, 0, 'ms'),
      u.logScanMs.median,
      null,
    ),
    row(
      '/v1/usage last_24h.requests == requests written',
      `${fmt(u.reported)} == ${fmt(u.rows)}`,
      u.reported - u.rows,
      {
        op: '==',
        value: 0,
        text: 'equal',
      },
    ),
  ]
}

export function hostileInputRows(h: HostileInputResult): Row[] {
  return [
    row(
      'request body: 10 MB of "[" until the 400 (read + structural limits, in-process)',
      fmtSeries(h.bracketMs, 2, 'ms'),
      h.bracketMs.median,
      { op: '<=', value: h.validMs.median, text: '≤ a valid 10 MB body' },
    ),
    row(
      'request body: valid 10 MB (read + parse + validate, in-process)',
      fmtSeries(h.validMs, 1, 'ms'),
      h.validMs.median,
      null,
    ),
    row(
      'upstream SSE: one 50 MB data line in 64 KiB chunks (parse, in-process)',
      fmtSeries(h.sseLineMs, 0, 'ms'),
      h.sseLineMs.median,
      null,
    ),
    ...(['letters', 'cjk'] as const).flatMap((kind) => {
      const { run, words } = h.countTokens[kind]
      const what = kind === 'cjk' ? 'CJK characters' : 'letters'
      return [
        row(
          `count_tokens estimate: 64 K random ${what} as words of 1–8 (in-process)`,
          fmtSeries(words, 1, 'ms'),
          words.median,
          null,
        ),
        row(
          `count_tokens estimate: 64 K random ${what} without a space (in-process)`,
          fmtSeries(run, 1, 'ms'),
          run.median,
          // Equal work up to the noise between runs (run / words 0.84–1.27 over nine runs, three
          // of them in --quick); whole (before limits/o200k.ts), a run cost 100× (letters) and
          // 250–400× (CJK) the same characters as words.
          { op: '<=', value: 1.5 * words.median, text: '≤ 1.5 × the same as words' },
        ),
      ]
    }),
  ]
}
