/**
 * @module
 * The bare prototype (`bare-proxy.ts`) in the same run as the gateway: closed loop at the highest
 * concurrency, non-stream and stream, direct and bare interleaved as the gateway's runs are. Its
 * rows put the gateway next to it: the cost of every feature, measured on the same machine and
 * minute rather than quoted from another day.
 */
import { join } from 'node:path'
import { chatPair, type SteadySize, warmToSteady } from './c1-warm.ts'
import { cpuMicros } from './proc-stats.ts'
import { REPO } from './processes.ts'
import { fmt, fmtSeries, type Row, row, series } from './report.ts'
import { type ClosedCell, type Ctx, closedLoad, MODES, type Mode } from './scenarios.ts'
import { startServer } from './server-child.ts'
import { chatTarget } from './workload.ts'

export type BareCells = Record<Mode, ClosedCell>

export interface BareProxy {
  base: string
  pid: number
  key: string
  stop(): Promise<void>
}

/** Starts the bare prototype against the fast mock, on its own database in the bench's directory. */
export async function startBareProxy(
  ctx: Pick<Ctx, 'mocks' | 'dir'>,
  /** `{ BARE_ELYSIA: '1' }`: the same handler as an Elysia route (bare-proxy.ts). */
  env: Record<string, string> = {},
  db = 'bare.db',
  /** Bun's own flags (`--cpu-prof`, say: plain-prof.ts). */
  bunFlags: string[] = [],
  /** A file for its stderr (a GC log: plain-gc.ts); else inherited. */
  logPath?: string,
): Promise<BareProxy> {
  const { info, stop } = await startServer<{ port: number; pid: number; key: string }>(
    [
      process.execPath,
      ...bunFlags,
      join(REPO, 'scripts', 'bench', 'bare-proxy.ts'),
      ctx.mocks.fast.url,
      join(ctx.dir, db),
    ],
    // The gateway's fetch cap too (serve sets it): Bun queues fetches past 256 otherwise.
    { env: { ...env, BUN_CONFIG_MAX_HTTP_REQUESTS: '4096' }, stderr: logPath },
  )
  return { base: `http://127.0.0.1:${info.port}`, pid: info.pid, key: info.key, stop }
}

export async function runBareProxy(
  ctx: Ctx,
  /** Its warm-up to steady state, as the lane's (c1-warm.ts): the gateway it is set against is past its own. */
  steady: SteadySize,
): Promise<{ cells: BareCells; c: number }> {
  const { mocks, plan } = ctx
  const c = plan.concurrencies.at(-1)!
  const proxy = await startBareProxy(ctx)
  try {
    const info = { pid: proxy.pid, key: proxy.key }
    const base = proxy.base
    const targets = [chatPair(base, 'bench', info.key)]
    await warmToSteady(ctx, [{ name: 'bare prototype', pid: proxy.pid, targets }], steady)
    const cells = {} as BareCells
    for (const mode of MODES) {
      const stream = mode === 'stream'
      const direct = chatTarget(mocks.fast.url, 'bench', stream)
      const bare = chatTarget(base, 'bench', stream, info.key)
      const cell: ClosedCell = { direct: [], gateway: [], gatewayCpuUs: [] }
      cells[mode] = cell
      for (let rep = 0; rep < plan.repeats; rep++) {
        if (plan.warmS > 0) await closedLoad(ctx, direct, c, plan.warmS)
        const d = await closedLoad(ctx, direct, c, plan.closedS)
        if (plan.warmS > 0) await closedLoad(ctx, bare, c, plan.warmS)
        const cpu0 = cpuMicros(info.pid)
        const b = await closedLoad(ctx, bare, c, plan.closedS)
        cell.gatewayCpuUs.push((cpuMicros(info.pid) - cpu0) / Math.max(1, b.requests))
        cell.direct.push(d)
        cell.gateway.push(b)
        ctx.log(
          `  bare prototype ${mode} c${c} #${rep + 1}: direct ${Math.round(d.rps)} req/s | bare ${Math.round(b.rps)} req/s` +
            ` cpu ${Math.round(cell.gatewayCpuUs.at(-1)!)} µs/req${d.errors + b.errors ? ` errors ${d.errors}/${b.errors}` : ''}`,
        )
      }
    }
    return { cells, c }
  } finally {
    await proxy.stop()
  }
}

/** The bare prototype's ratio and CPU, and the gateway's against it (same run, same concurrency). */
export function bareRows(bare: { cells: BareCells; c: number }, gateway: Record<string, ClosedCell>): Row[] {
  const rows: Row[] = []
  for (const mode of MODES) {
    const cell = bare.cells[mode]
    const what = `${mode === 'stream' ? 'stream' : 'non-stream'}, c${bare.c}`
    const ratio = series(cell.gateway.map((r, i) => r.rps / cell.direct[i]!.rps))
    const cpu = series(cell.gatewayCpuUs)
    rows.push(
      row(
        `bare prototype (SHA-256 key lookup, UPSERT counter, fetch, pipe) / direct throughput, ${what}`,
        fmtSeries(ratio, 3, '×'),
        ratio.median,
        null,
      ),
    )
    rows.push(row(`bare prototype CPU per request, ${what}`, fmtSeries(cpu, 0, 'µs'), cpu.median, null))
    const gw = gateway[`${mode}/c${bare.c}`]
    if (!gw) continue
    const gwRps = series(gw.gateway.map((r) => r.rps)).median
    const gwCpu = series(gw.gatewayCpuUs).median
    const bareRps = series(cell.gateway.map((r) => r.rps)).median
    rows.push(
      row(
        `gateway vs bare prototype, ${what}: throughput ratio / CPU per request added by the gateway's features`,
        `${fmt(gwRps / bareRps, 2)} × / +${fmt(gwCpu - cpu.median, 0)} µs (${fmt(gwCpu, 0)} vs ${fmt(cpu.median, 0)})`,
        gwRps / bareRps,
        null,
      ),
    )
  }
  return rows
}
