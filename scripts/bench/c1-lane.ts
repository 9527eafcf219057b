/**
 * @module
 * The c=1 lane (issue 46, onthebench's definitions): one request at a time, interleaved rounds,
 * added latency per target = its percentile minus direct's over the same rounds (pooled samples;
 * each round's added p50 too, for the spread). Targets: direct (the fast mock), Caddy when present
 * (caddy.ts), the bare prototype, Switchyard with a plain key (`mock/bench`, a plan with no limit)
 * and governed (TPM + TPD + a budget on the key's plan, a priced route with a fallback:
 * `mock/bench-full`). Non-stream to the last byte; stream to the first content byte and to the end.
 * Then the inter-event overhead: the same targets on a stream paced at an event every 2 ms, each
 * gap through the proxy minus the gap direct. Then the timeline: a second gateway under
 * loop-trace.ts takes the same requests, and what its loop did during the ones over p99 is set
 * against the rest (c1-timeline.ts).
 */
import { mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { type BareProxy, startBareProxy } from './bare.ts'
import { type LaneSamples, type LaneTarget, runLaneClient } from './c1-client.ts'
import { analyse, renderTimeline, type Timeline } from './c1-timeline.ts'
import { chatPair, type SteadySize, type Warmed, warmRows, warmToSteady } from './c1-warm.ts'
import { type Caddy, findCaddy, startCaddy } from './caddy.ts'
import type { TraceEvent } from './loop-trace.ts'
import { FULL_MODEL, type Gateway, REPO, startGateway } from './processes.ts'
import { fmt, type Row, row } from './report.ts'
import { type Ctx, closedLoad } from './scenarios.ts'
import { meteredKey } from './tokens.ts'
import { chatTarget, quantile, sortedCopy } from './workload.ts'

const PROXIES = ['caddy', 'bare', 'plain-before', 'plain', 'governed-before', 'governed'] as const
type Proxy = (typeof PROXIES)[number]
type Name = 'direct' | Proxy
/** What is timed: non-stream to the last byte; stream to the first content byte and to the end. */
const MEASURES = ['nonstream', 'stream-first', 'stream-end'] as const
type Measure = (typeof MEASURES)[number]

export interface LaneSize {
  rounds: number
  batch: number
  /** c=1 requests a target before round 1 (connection pools); the JIT is warmed by `steady` before. */
  warm: number
  /** Each process's warm-up to steady state (c1-warm.ts) before anything is timed. */
  steady: SteadySize
  /** Paced streams per target for the inter-event row (21 gaps each). */
  gapRequests: number
  /** Requests per target for the traced gateway's timeline. */
  tracedRounds: number
}

export interface LaneResult {
  caddy: string | null
  size: LaneSize
  /** Per measure, per target: the pooled µs samples, and per round. */
  samples: Record<Measure, Partial<Record<Name, number[][]>>>
  gaps: Partial<Record<Name, number[]>>
  /** Per target: failed requests, each resent (c1-client.ts), and their messages. */
  errors: Record<string, number>
  why: Record<string, Record<string, number>>
  timeline: Timeline | null
  /** The same for the `--baseline` checkout. */
  timelineBefore: Timeline | null
  /**
   * With `--baseline`: closed loop at c64, plain key, this gateway's req/s over the baseline's,
   * one ratio per interleaved pair, per mode — what the cuts cost or gain in throughput.
   */
  c64: { nonstream: number[]; stream: number[] } | null
  /** Each process's warm-up to steady state before the lane (requests, seconds, JIT µs a request). */
  warmed: Warmed[]
}

export interface LaneOptions {
  binary: boolean
  env?: Record<string, string>
  size: LaneSize
  timeline: boolean
  /**
   * Another checkout (`--baseline DIR`, e.g. `git archive main src | tar -x -C DIR`): its gateway
   * serves the `-before` targets in the same rounds, so a change is measured interleaved.
   */
  baseline?: string
}

export async function runLane(ctx: Ctx, opts: LaneOptions): Promise<LaneResult> {
  const { gw, mocks } = ctx
  const dir = join(ctx.dir, 'lane')
  mkdirSync(dir, { recursive: true })
  const governedKey = await meteredKey(gw, ctx.dir, opts.binary, 'bench-lane')
  const exe = findCaddy()
  let caddy: Caddy | null = null
  let bare: BareProxy | null = null
  let before: Gateway | null = null
  try {
    let beforeKey = ''
    if (opts.baseline) {
      const bdir = join(dir, 'before')
      before = await startGateway({ dir: bdir }, mocks, {
        binary: false,
        env: opts.env,
        root: opts.baseline,
      })
      beforeKey = await meteredKey(before, bdir, false, 'bench-lane')
      ctx.log(`  baseline gateway (the -before rows): ${opts.baseline}/src/main.ts`)
    }
    const b = before
    if (exe) caddy = await startCaddy(exe, mocks.fast.url, dir)
    else
      ctx.log(
        '  caddy not found ($CADDY or on the PATH): the Caddy row is skipped (apt-get download caddy; dpkg -x)',
      )
    bare = await startBareProxy(ctx)
    const bases: Record<Name, ((stream: boolean, paced: boolean) => LaneTarget) | null> = {
      direct: (s, p) => lane('direct', s, chatTarget(mocks.fast.url, p ? 'slow-stream-2ms' : 'bench', s)),
      caddy: caddy
        ? (s, p) => lane('caddy', s, chatTarget(caddy!.url, p ? 'slow-stream-2ms' : 'bench', s))
        : null,
      bare: (s, p) => lane('bare', s, chatTarget(bare!.base, p ? 'slow-stream-2ms' : 'bench', s, bare!.key)),
      plain: (s, p) =>
        lane('plain', s, chatTarget(gw.url, p ? 'mock/slow-stream-2ms' : 'mock/bench', s, gw.key)),
      governed: (s, p) =>
        lane('governed', s, chatTarget(gw.url, `mock/${FULL_MODEL}${p ? '-paced' : ''}`, s, governedKey)),
      'plain-before': b
        ? (s, p) =>
            lane('plain-before', s, chatTarget(b.url, p ? 'mock/slow-stream-2ms' : 'mock/bench', s, b.key))
        : null,
      'governed-before': b
        ? (s, p) =>
            lane(
              'governed-before',
              s,
              chatTarget(b.url, `mock/${FULL_MODEL}${p ? '-paced' : ''}`, s, beforeKey),
            )
        : null,
    }
    const names = (Object.keys(bases) as Name[]).filter((n) => bases[n])
    const { size } = opts
    // Steady state first: the figures are a long-lived gateway's, not its JIT's first minute's.
    const pair = (n: Name) => ({ nonstream: bases[n]!(false, false), stream: bases[n]!(true, false) })
    const procs: { name: string; pid: number | null; of: Name[] }[] = [
      { name: 'direct', pid: null, of: ['direct'] },
      { name: 'caddy', pid: null, of: ['caddy'] },
      { name: 'bare', pid: bare.pid, of: ['bare'] },
      { name: 'gateway', pid: gw.pid, of: ['plain', 'governed'] },
      { name: 'gateway-before', pid: b?.pid ?? null, of: ['plain-before', 'governed-before'] },
    ]
    const warmed = await warmToSteady(
      ctx,
      procs
        .map((p) => ({ ...p, of: p.of.filter((n) => bases[n]) }))
        .filter((p) => p.of.length)
        .map((p) => ({ name: p.name, pid: p.pid, targets: p.of.map(pair) })),
      size.steady,
    )
    const run = await runLaneClient({
      targets: [false, true].flatMap((s) => names.map((n) => bases[n]!(s, false))),
      rounds: size.rounds,
      batch: size.batch,
      warm: size.warm,
      stamps: false,
      gaps: false,
    })
    const samples = { nonstream: {}, 'stream-first': {}, 'stream-end': {} } as LaneResult['samples']
    for (const n of names) {
      samples.nonstream[n] = run.total[`${n}/nonstream`]!
      samples['stream-first'][n] = run.first[`${n}/stream`]!
      samples['stream-end'][n] = run.total[`${n}/stream`]!
    }
    ctx.log(`  ${summary(samples)}`)
    const paced = await runLaneClient({
      targets: names.map((n) => bases[n]!(true, true)),
      rounds: 1,
      batch: size.gapRequests,
      warm: 5,
      stamps: false,
      gaps: true,
    })
    const gaps: LaneResult['gaps'] = {}
    for (const n of names) gaps[n] = paced.gaps[`${n}/stream`]!
    const c64 = b ? await closedPairs(ctx, b, size.rounds >= 10 ? 3 : 1) : null
    const timeline = opts.timeline ? await traced(ctx, opts, bases.direct!) : null
    if (timeline) ctx.log(renderTimeline(timeline))
    const timelineBefore =
      opts.timeline && opts.baseline ? await traced(ctx, opts, bases.direct!, opts.baseline) : null
    if (timelineBefore) ctx.log(`The baseline's timeline (before):\n\n${renderTimeline(timelineBefore)}`)
    return {
      caddy: caddy?.version ?? null,
      size,
      samples,
      gaps,
      errors: { ...run.errors, ...prefixed('paced', paced.errors) },
      why: { ...run.why, ...prefixed('paced', paced.why) },
      timeline,
      timelineBefore,
      c64,
      warmed,
    }
  } finally {
    await caddy?.stop()
    await bare?.stop()
    await before?.stop()
  }
}

/** Closed loop at c64 on the plain key, this gateway and the baseline's in turns (the order alternating). */
async function closedPairs(
  ctx: Ctx,
  before: Gateway,
  pairs: number,
): Promise<NonNullable<LaneResult['c64']>> {
  const out = { nonstream: [] as number[], stream: [] as number[] }
  for (let i = 0; i < pairs; i++) {
    for (const stream of [false, true]) {
      const now = chatTarget(ctx.gw.url, 'mock/bench', stream, ctx.gw.key)
      const base = chatTarget(before.url, 'mock/bench', stream, before.key)
      const rps = { now: 0, base: 0 }
      for (const which of i % 2 ? (['base', 'now'] as const) : (['now', 'base'] as const)) {
        const t = which === 'now' ? now : base
        await closedLoad(ctx, t, 64, 1)
        rps[which] = (await closedLoad(ctx, t, 64, 4)).rps
      }
      out[stream ? 'stream' : 'nonstream'].push(rps.now / rps.base)
      ctx.log(
        `  c64 ${stream ? 'stream' : 'non-stream'} pair ${i + 1}: ${Math.round(rps.now)} vs ${Math.round(rps.base)} req/s`,
      )
    }
  }
  return out
}

function lane(name: Name, stream: boolean, t: ReturnType<typeof chatTarget>): LaneTarget {
  return { ...t, name: `${name}/${stream ? 'stream' : 'nonstream'}`, stream }
}

function prefixed<T>(p: string, byTarget: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(byTarget).map(([k, v]) => [`${p} ${k}`, v]))
}

/** The same requests through a gateway under loop-trace.ts, then what its loop did in the tail. */
async function traced(
  ctx: Ctx,
  opts: { binary: boolean; env?: Record<string, string>; size: LaneSize },
  direct: (s: boolean, p: boolean) => LaneTarget,
  /** The baseline's checkout (its timeline, for the before-and-after), else this one. */
  root?: string,
): Promise<Timeline> {
  if (opts.binary) throw new Error('the traced gateway runs from source (a preload); drop --binary')
  const dir = join(ctx.dir, 'lane', root ? 'traced-before' : 'traced')
  mkdirSync(dir, { recursive: true })
  const out = join(dir, 'trace.json')
  let gw: Gateway | null = null
  let samples: LaneSamples
  try {
    gw = await startGateway({ dir }, ctx.mocks, {
      binary: false,
      // The cap set, so `serve` does not re-run itself: the preload must be in the serving process.
      env: { ...opts.env, BUN_CONFIG_MAX_HTTP_REQUESTS: '4096', LANE_TRACE_OUT: out },
      bunFlags: ['--preload', join(REPO, 'scripts', 'bench', 'loop-trace.ts')],
      root,
    })
    const key = await meteredKey(gw, dir, false, 'bench-lane')
    const g = gw
    const t = (name: Name, s: boolean, model: string, k: string) =>
      lane(name, s, chatTarget(g.url, model, s, k))
    // Steady state as the lane's gateways (its warm-up's events fall outside every stamped request).
    const targets = [chatPair(g.url, 'mock/bench', g.key), chatPair(g.url, `mock/${FULL_MODEL}`, key)]
    const name = root ? 'traced gateway-before' : 'traced gateway'
    await warmToSteady(ctx, [{ name, pid: g.pid, targets }], opts.size.steady)
    samples = await runLaneClient({
      targets: [
        direct(false, false),
        t('plain', false, 'mock/bench', g.key),
        t('governed', false, `mock/${FULL_MODEL}`, key),
        t('governed', true, `mock/${FULL_MODEL}`, key),
      ],
      rounds: opts.size.tracedRounds,
      batch: opts.size.batch,
      warm: opts.size.warm,
      stamps: true,
      gaps: false,
    })
  } finally {
    await gw?.stop()
  }
  const events = JSON.parse(readFileSync(out, 'utf8')) as TraceEvent[]
  const stamps: Record<string, [number, number][]> = {}
  const totals: Record<string, number[]> = {}
  for (const name of ['plain/nonstream', 'governed/nonstream', 'governed/stream']) {
    stamps[name] = samples.stamps[name]!
    // The stream's tail is judged on its first content byte, as the lane's row.
    totals[name] = (name.endsWith('/stream') ? samples.first : samples.total)[name]!.flat()
  }
  return analyse(events, stamps, totals)
}

const pooled = (rounds: number[][] | undefined) => sortedCopy((rounds ?? []).flat())

export interface Added {
  p50: number
  p99: number
  p999: number
  /** Each round's p50 minus direct's of the same round: min and max. */
  roundP50: [number, number]
}

/** µs the target adds to direct at p50 / p99 / p99.9 (pooled), and the rounds' p50 spread. */
export function added(target: number[][], direct: number[][]): Added {
  const t = pooled(target)
  const d = pooled(direct)
  const per = target.map((r, i) => quantile(sortedCopy(r), 0.5) - quantile(sortedCopy(direct[i] ?? []), 0.5))
  return {
    p50: quantile(t, 0.5) - quantile(d, 0.5),
    p99: quantile(t, 0.99) - quantile(d, 0.99),
    p999: quantile(t, 0.999) - quantile(d, 0.999),
    roundP50: [Math.min(...per), Math.max(...per)],
  }
}

function summary(s: LaneResult['samples']): string {
  return MEASURES.map((m) => {
    const d = s[m].direct!
    const parts = PROXIES.filter((p) => s[m][p]).map((p) => {
      const a = added(s[m][p]!, d)
      return `${p} +${fmt(a.p50)}/+${fmt(a.p99)}`
    })
    return `${m}: ${parts.join(', ')} µs (p50/p99)`
  }).join('; ')
}

const WHAT: Record<Measure, string> = {
  nonstream: 'non-stream, to the last byte',
  'stream-first': 'stream, to the first content byte',
  'stream-end': 'stream, to the end',
}
const WHO: Record<Proxy, string> = {
  caddy: 'Caddy reverse proxy',
  bare: 'bare prototype',
  plain: 'Switchyard, plain key',
  governed: 'Switchyard, TPM + TPD + budget + fallback',
  'plain-before': 'baseline (before), plain key',
  'governed-before': 'baseline (before), TPM + TPD + budget + fallback',
}

export function laneRows(r: LaneResult): Row[] {
  const rows: Row[] = []
  const n = r.size.rounds * r.size.batch
  rows.push(...warmRows(r.warmed))
  for (const m of MEASURES) {
    const d = pooled(r.samples[m].direct)
    rows.push(
      row(
        `c=1 direct, ${WHAT[m]}: p50 / p99 / p99.9 (${fmt(n)} requests, ${r.size.rounds} interleaved rounds)`,
        `${fmt(quantile(d, 0.5))} / ${fmt(quantile(d, 0.99))} / ${fmt(quantile(d, 0.999))} µs`,
        quantile(d, 0.5),
        null,
      ),
    )
    for (const p of PROXIES) {
      const s = r.samples[m][p]
      if (!s) continue
      const a = added(s, r.samples[m].direct!)
      rows.push(
        row(
          `c=1 added, ${WHO[p]}, ${WHAT[m]}: p50 / p99 / p99.9 (rounds' p50)`,
          `+${fmt(a.p50)} / +${fmt(a.p99)} / +${fmt(a.p999)} µs (${fmt(a.roundP50[0])}–${fmt(a.roundP50[1])})`,
          a.p99,
          null,
        ),
      )
    }
    const c = r.samples[m].caddy
    const g = r.samples[m].governed
    if (m !== 'stream-end' && c && g) {
      const ac = added(c, r.samples[m].direct!)
      const ag = added(g, r.samples[m].direct!)
      rows.push(
        row(`c=1 governed − Caddy, ${WHAT[m]}: added p99`, `${fmt(ag.p99 - ac.p99)} µs`, ag.p99 - ac.p99, {
          op: '<=',
          value: 150,
          text: '≤ +150 µs',
        }),
        row(`c=1 governed − Caddy, ${WHAT[m]}: added p50`, `${fmt(ag.p50 - ac.p50)} µs`, ag.p50 - ac.p50, {
          op: '<=',
          value: 100,
          text: '≤ +100 µs',
        }),
      )
    }
  }
  const dg = sortedCopy(r.gaps.direct ?? [])
  for (const p of PROXIES) {
    const gp = r.gaps[p]
    if (!gp) continue
    const s = sortedCopy(gp)
    rows.push(
      row(
        `stream inter-event gap added, ${WHO[p]} (an event every 2 ms; ${fmt(s.length)} gaps): p50 / p99`,
        `${fmt(quantile(s, 0.5) - quantile(dg, 0.5))} / ${fmt(quantile(s, 0.99) - quantile(dg, 0.99))} µs`,
        quantile(s, 0.99) - quantile(dg, 0.99),
        null,
      ),
    )
  }
  for (const mode of ['nonstream', 'stream'] as const) {
    const ratios = r.c64?.[mode]
    if (!ratios?.length) continue
    const s = [...ratios].sort((a, b) => a - b)
    rows.push(
      row(
        `c64 closed loop, plain key, ${mode === 'stream' ? 'stream' : 'non-stream'}: this gateway / the baseline's throughput (interleaved pairs)`,
        `${fmt(s[s.length >> 1]!, 3)} × (${s.map((x) => fmt(x, 3)).join(', ')})`,
        s[s.length >> 1]!,
        null,
      ),
    )
  }
  if (!r.caddy) rows.push(row('c=1 Caddy row', 'skipped: caddy not found', Number.NaN, null))
  const errors = Object.values(r.errors).reduce((x, y) => x + y, 0)
  // Each resent, so every target's sample count is whole: the losses per target, and why.
  const lost = Object.fromEntries(
    Object.entries(r.errors)
      .filter(([, n]) => n > 0)
      .map(([k, n]) => [k, { failed: n, why: r.why?.[k] ?? {} }]),
  )
  if (errors) rows.push(row('c=1 lane: failed requests, each resent', JSON.stringify(lost), errors, null))
  return rows
}
