/**
 * @module
 * The cost waterfall (issue 24): the same c64 chat load against the full path — a model with a
 * fallback, a key whose plan sets TPM, TPD and a budget — and against the same path with one
 * piece switched off at a time (a bench-only build, `waterfall-serve.ts`), beside the bare
 * prototype and the mock direct. Every bar runs once per repetition, in the same order, so drift
 * on a shared machine hits all of them. A bar's cost is the full path's CPU per request minus its
 * own; its throughput is set against the full path's and the bare prototype's of the same round.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type BareProxy, startBareProxy } from './bare.ts'
import { runOpenLoop } from './open-loop.ts'
import { cpuMicros } from './proc-stats.ts'
import { CLIENT_ENV, cliJson, configDoc, FULL_MODEL, gatewayCli, PRICED_MODEL, REPO } from './processes.ts'
import { fmt, fmtSeries, type Row, row, series } from './report.ts'
import { type Ctx, closedLoad, MODES, type Mode } from './scenarios.ts'
import { startServer } from './server-child.ts'
import type { Switch } from './waterfall-serve.ts'
import { chatTarget, type LoadResult } from './workload.ts'

export const WATERFALL_CONCURRENCY = 64
/** The cold pass: a request every 5 ms, each one waking an idle gateway. */
export const COLD_RATE = 200
const COLD_S = 4
const COLD_WARM_S = 1

interface Bar {
  id: string
  /** What is off, as the table says it. */
  label: string
  /** Which process answers: a waterfall build with one switch, the bare prototype, or the mock. */
  server: Switch | 'bare' | 'direct'
  key: 'metered' | 'plain'
  model: string
  /** Served from another checkout (`WATERFALL_BEFORE`): the same bar before a change, same run. */
  before?: true
}

const onFull = (id: string, server: Switch, label: string): Bar => ({
  id,
  label,
  server,
  key: 'metered',
  model: FULL_MODEL,
})

const ALL_BARS: Bar[] = [
  { id: 'direct', label: 'the mock, direct', server: 'direct', key: 'plain', model: 'bench' },
  { id: 'bare', label: 'the bare prototype', server: 'bare', key: 'plain', model: 'bench' },
  onFull('full', 'none', 'full path: a fallback, TPM, TPD and a budget'),
  { id: 'fallback', label: 'no fallback configured', server: 'none', key: 'metered', model: PRICED_MODEL },
  {
    id: 'tokens',
    label: 'no token reservation (plan without TPM/TPD/budget)',
    server: 'none',
    key: 'plain',
    model: FULL_MODEL,
  },
  onFull('access-log', 'access-log', 'access log line off'),
  onFull('metrics', 'metrics', 'metrics off'),
  onFull('traffic', 'traffic', 'traffic bookkeeping off (and with it access line and metrics)'),
  onFull('validation', 'validation', 'request validation off (JSON.parse only)'),
  onFull('auth-cache', 'auth-cache', 'auth cache lookup off (one remembered key)'),
  onFull('admission', 'admission', 'admission write off (and the reservation with it)'),
  onFull('usage', 'usage', 'usage record off'),
  onFull('elysia', 'elysia', "Elysia's routing and response handling → a plain Bun.serve route"),
  onFull('relay', 'relay', 'stream relay as a pure pipe (no event read: no usage, no settlement to it)'),
]

/** `WATERFALL_BARS=full,tokens` runs only those (with direct and bare, always): for trying a cut. */
const only = process.env.WATERFALL_BARS?.split(',')
/**
 * `WATERFALL_BEFORE=<checkout>`: the full path and its no-token-limits bar also served from that
 * checkout (its own database, its own CLI), interleaved with this one's: a before/after in one run.
 */
const beforeTree = process.env.WATERFALL_BEFORE ?? null
export const BARS = [
  ...(only
    ? ALL_BARS.filter((b) => b.id === 'direct' || b.id === 'bare' || b.id === 'full' || only.includes(b.id))
    : ALL_BARS),
  ...(beforeTree
    ? ALL_BARS.filter((b) => b.id === 'full' || b.id === 'tokens').map(
        (b): Bar => ({ ...b, id: `before-${b.id}`, label: `BEFORE: ${b.label}`, before: true }),
      )
    : []),
]

interface Cell {
  rps: number[]
  cpuUs: number[]
  errors: number
  /** CPU per request at COLD_RATE (open loop), and that run's p50 latency. */
  coldCpuUs: number[]
  coldP50Ms: number[]
}
export type WaterfallResult = Record<Mode, Record<string, Cell>>

interface Proc {
  url: string
  pid: number
  stop(): Promise<void>
}

/**
 * `WATERFALL_CPU_PROF=<dir>`: every build runs under `bun --cpu-prof`, its profile (named by the
 * build) written to that directory when the run ends — where a bar's CPU goes, function by function.
 */
const profDir = process.env.WATERFALL_CPU_PROF ?? null
/** `WATERFALL_COLD=0`: no cold pass (the c64 rounds only, for trying a cut quickly). */
const coldPass = process.env.WATERFALL_COLD !== '0'
/** `WATERFALL_MODES=stream`: one mode only. */
const modes = MODES.filter((m) => (process.env.WATERFALL_MODES?.split(',') ?? MODES).includes(m))
/** `WATERFALL_ROUNDS=n`: the closed-loop rounds, instead of the plan's repeats. */
const rounds = Number(process.env.WATERFALL_ROUNDS) || null

async function startBuild(configPath: string, off: Switch, logPath: string, repo = REPO): Promise<Proc> {
  const name = `${repo === REPO ? 'now' : 'before'}-${off}`
  const prof =
    profDir === null
      ? []
      : ['--cpu-prof', '--cpu-prof-md', `--cpu-prof-dir=${profDir}`, `--cpu-prof-name=${name}`]
  const { info, stop } = await startServer<{ url: string; pid: number }>(
    [process.execPath, ...prof, join(repo, 'scripts', 'bench', 'waterfall-serve.ts'), configPath, off],
    // No health check: the bars with a piece off (the bare Elysia one) do not all serve /healthz.
    { cwd: repo, stderr: logPath, env: CLIENT_ENV },
  )
  return { ...info, stop }
}

export async function runWaterfall(ctx: Ctx, binary: boolean): Promise<WaterfallResult> {
  const { gw, mocks, plan } = ctx
  const configPath = join(ctx.dir, 'switchyard.yaml')
  const common = ['--config', configPath, '--db', gw.dbPath, '--json']
  await cliJson([
    ...gatewayCli(binary),
    'accounts',
    'create',
    'bench-waterfall',
    '--plan',
    'metered',
    ...common,
  ])
  const metered = (await cliJson([
    ...gatewayCli(binary),
    'keys',
    'create',
    'bench-waterfall',
    ...common,
  ])) as {
    key: string
  }
  const builds = new Map<string, Proc>()
  const buildOf = (bar: Bar) => builds.get(`${bar.before ? 'before:' : ''}${bar.server}`)!
  const keys = { metered: metered.key, plain: gw.key }
  let beforeKeys = keys
  let bare: BareProxy | null = null
  try {
    if (beforeTree) beforeKeys = await setUpBefore(ctx, beforeTree)
    for (const bar of BARS) {
      const id = `${bar.before ? 'before:' : ''}${bar.server}`
      if (bar.server === 'direct' || bar.server === 'bare' || builds.has(id)) continue
      const log = join(ctx.dir, `waterfall-${id.replace(':', '-')}.log`)
      builds.set(
        id,
        bar.before
          ? await startBuild(
              join(ctx.dir, 'before', 'switchyard.yaml'),
              bar.server as Switch,
              log,
              beforeTree!,
            )
          : await startBuild(configPath, bar.server as Switch, log),
      )
    }
    bare = await startBareProxy(ctx)
    const c = WATERFALL_CONCURRENCY
    const out = {} as WaterfallResult
    for (const mode of modes) {
      const stream = mode === 'stream'
      out[mode] = Object.fromEntries(
        BARS.map((b) => [b.id, { rps: [], cpuUs: [], errors: 0, coldCpuUs: [], coldP50Ms: [] }]),
      )
      const targetOf = (bar: Bar) => {
        const proxy = bare!
        return bar.server === 'direct'
          ? { target: chatTarget(mocks.fast.url, 'bench', stream), pid: null }
          : bar.server === 'bare'
            ? { target: chatTarget(proxy.base, 'bench', stream, proxy.key), pid: proxy.pid }
            : {
                target: chatTarget(
                  buildOf(bar).url,
                  `mock/${bar.model}`,
                  stream,
                  (bar.before ? beforeKeys : keys)[bar.key],
                ),
                pid: buildOf(bar).pid,
              }
      }
      for (let rep = 0; rep < (rounds ?? plan.repeats); rep++) {
        for (const bar of BARS) {
          const { target, pid } = targetOf(bar)
          if (plan.warmS > 0) await closedLoad(ctx, target, c, plan.warmS)
          const cpu0 = pid === null ? 0 : cpuMicros(pid)
          const r: LoadResult = await closedLoad(ctx, target, c, plan.closedS)
          const cell = out[mode][bar.id]!
          cell.rps.push(r.rps)
          cell.cpuUs.push(pid === null ? Number.NaN : (cpuMicros(pid) - cpu0) / Math.max(1, r.requests))
          cell.errors += r.errors
          ctx.log(
            `  waterfall ${mode} #${rep + 1} ${bar.id}: ${Math.round(r.rps)} req/s` +
              `${pid === null ? '' : ` cpu ${Math.round(cell.cpuUs.at(-1)!)} µs/req`}${r.errors ? ` errors ${r.errors}` : ''}`,
          )
        }
      }
      // The cold pass: what a request costs when it wakes an idle process (issue 24's 5–7×).
      const coldS = plan.cold?.s ?? COLD_S
      const coldWarmS = plan.cold?.warmS ?? COLD_WARM_S
      for (let rep = 0; rep < (coldPass ? Math.min(plan.repeats, 2) : 0); rep++) {
        for (const bar of BARS) {
          const { target, pid } = targetOf(bar)
          if (pid === null) continue
          const cpu0 = cpuMicros(pid)
          const r = await runOpenLoop(target, COLD_RATE, coldS, coldWarmS, stream)
          const cell = out[mode][bar.id]!
          cell.coldCpuUs.push((cpuMicros(pid) - cpu0) / Math.round(COLD_RATE * (coldS + coldWarmS)))
          cell.coldP50Ms.push(r.p50Ms)
          cell.errors += r.errors
          ctx.log(
            `  waterfall cold ${COLD_RATE}/s ${mode} #${rep + 1} ${bar.id}: cpu ${Math.round(cell.coldCpuUs.at(-1)!)} µs/req p50 ${r.p50Ms.toFixed(2)} ms`,
          )
        }
      }
    }
    return out
  } finally {
    await bare?.stop()
    for (const p of builds.values()) await p.stop()
  }
}

/** The other checkout's database and accounts, made with its own CLI (its schema may be older). */
async function setUpBefore(ctx: Ctx, tree: string): Promise<{ metered: string; plain: string }> {
  const dir = join(ctx.dir, 'before')
  mkdirSync(dir, { recursive: true })
  const configPath = join(dir, 'switchyard.yaml')
  writeFileSync(configPath, JSON.stringify(configDoc(ctx.mocks, join(dir, 'switchyard.db')), null, 2))
  const cli = [process.execPath, join(tree, 'src', 'main.ts')]
  const common = ['--config', configPath, '--json']
  await cliJson([...cli, 'migrate', ...common])
  const key = async (account: string, plan: string) => {
    await cliJson([...cli, 'accounts', 'create', account, '--plan', plan, ...common])
    return ((await cliJson([...cli, 'keys', 'create', account, ...common])) as { key: string }).key
  }
  return { plain: await key('bench', 'unlimited'), metered: await key('bench-waterfall', 'metered') }
}

/** Per round, `a / b` of the same repetition: the ratio drift does not move. */
const paired = (a: number[], b: number[]) => series(a.map((x, i) => x / b[i]!))

export function waterfallRows(result: WaterfallResult): Row[] {
  const rows: Row[] = []
  for (const mode of MODES) {
    if (result[mode] === undefined) continue
    const what = `${mode === 'stream' ? 'stream' : 'non-stream'}, c${WATERFALL_CONCURRENCY}`
    const cells = result[mode]
    const full = cells.full!
    const bare = cells.bare!
    const fullCpu = series(full.cpuUs).median
    const fullCold = series(full.coldCpuUs).median
    for (const bar of BARS) {
      const cell = cells[bar.id]!
      const rps = series(cell.rps)
      const cpu = series(cell.cpuUs)
      const parts = [`${fmtSeries(rps, 0, 'req/s')}`]
      if (bar.id !== 'direct') parts.push(`${fmt(paired(cell.rps, full.rps).median, 2)} × full`)
      if (bar.id !== 'bare' && bar.id !== 'direct')
        parts.push(`${fmt(paired(cell.rps, bare.rps).median, 2)} × bare`)
      if (Number.isFinite(cpu.median)) parts.push(`CPU ${fmtSeries(cpu, 0, 'µs')}/req`)
      if (bar.before) parts.push(`${fmt(cpu.median - fullCpu, 0)} µs more than now`)
      else if (bar.server !== 'direct' && bar.server !== 'bare' && bar.id !== 'full')
        parts.push(`bar ${fmt(fullCpu - cpu.median, 0)} µs`)
      const cold = series(cell.coldCpuUs)
      if (Number.isFinite(cold.median))
        parts.push(
          `at ${COLD_RATE}/s: CPU ${fmt(cold.median, 0)} µs/req (${fmt(cold.median / cpu.median, 1)} × c${WATERFALL_CONCURRENCY})` +
            (bar.server !== 'bare' && bar.id !== 'full' && !bar.before
              ? `, bar ${fmt(fullCold - cold.median, 0)} µs`
              : ''),
        )
      if (cell.errors) parts.push(`${cell.errors} errors`)
      rows.push(row(`waterfall, ${what}: ${bar.label}`, parts.join(' · '), Number.NaN, null))
    }
    const vsBare = paired(full.rps, bare.rps)
    rows.push(
      row(
        `throughput with a fallback, TPM and a budget / bare prototype, ${what} (same rounds)`,
        fmtSeries(vsBare, 2, '×'),
        vsBare.median,
        { op: '>=', value: 0.8, text: '≥ 0.80 × bare' },
      ),
    )
  }
  return rows
}
