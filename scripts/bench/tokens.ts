/**
 * @module
 * Tokens and money on the hot path (DESIGN §11): the same priced mock route, the same load, from a
 * key whose plan sets no token or money limit and from one whose plan sets TPM, TPD and a monthly
 * budget (each too large to refuse: every request reserves, is admitted and settles).
 *
 * Two gateways of the same build, each with both keys, loaded at the same time (c16 each, each
 * its own wrk and database), in a crossover: in one round the first serves the plain route while
 * the second serves the metered one, in the next the other way round. A pair of rounds gives one
 * ratio, the geometric mean of the two rounds' metered-over-plain: the machine's drift falls on
 * both routes at once (two routes run one after the other put it into every ratio: one paired
 * ratio scattered 0.94–1.28 here), and each gateway's own offset (a process's JIT and heap: a few
 * µs either way) falls on both routes alike, as each serves both in turns. The target: CPU per
 * request within 10 % of the unmetered route, judged on the median of the pairs' ratios.
 */
import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import type { LaneTarget } from './c1-client.ts'
import { cpuMicros } from './proc-stats.ts'
import {
  cliJson,
  FULL_MODEL,
  type Gateway,
  gatewayCli,
  PRICED_MODEL,
  startGateway,
  startMocks,
  workspace,
} from './processes.ts'
import { fmt, fmtSeries, type Row, row, series } from './report.ts'
import { type Ctx, closedLoad, counted, type Forwarded, MODES, type Mode } from './scenarios.ts'
import { chatTarget, type Target } from './workload.ts'

export const TOKENS_CONCURRENCY = 16

type Route = 'plain' | 'metered'

/** Per mode: each pair's ratio (metered over plain), and every round's CPU per request of each route. */
export type TokensResult = Record<Mode, { pairs: number[]; plain: number[]; metered: number[] }>

/** One gateway of the two, its workspace (its wrk's script goes there) and its two keys. */
interface Side {
  ctx: Ctx
  key: Record<Route, string>
}

/** A metered account and key on `gw` (through its CLI and database); the key's requests count as admitted. */
export async function meteredKey(
  gw: Gateway,
  dir: string,
  binary: boolean,
  /** One account per row that asks (the agent row runs on the gateway the tokens row used). */
  account = 'bench-metered',
): Promise<string> {
  const common = ['--config', join(dir, 'switchyard.yaml'), '--db', gw.dbPath, '--json']
  const cli = gatewayCli(binary)
  await cliJson([...cli, 'accounts', 'create', account, '--plan', 'metered', ...common])
  const { key } = (await cliJson([...cli, 'keys', 'create', account, ...common])) as { key: string }
  gw.keys.push(key)
  return key
}

/** One of the row's two routes on a gateway of its own (`withRouteSides`). */
export interface RouteSide {
  name: Route
  pid: number
  target: Target
}

/**
 * The row's two routes, the plain key's and the metered one's, each on a gateway of its own (with
 * its own mocks and workspace), for the probes that profile them (tokens-prof.ts, tokens-perf.ts):
 * `run` gets the two sides, and every process is stopped after it, returned or thrown.
 */
export async function withRouteSides(
  opts: { stream: boolean; root?: string; bunFlags?: (name: Route) => string[] },
  run: (sides: RouteSide[]) => Promise<void>,
): Promise<void> {
  const mocks = await startMocks(20)
  const ws = workspace()
  const gateways: Gateway[] = []
  try {
    const sides: RouteSide[] = []
    for (const name of ['plain', 'metered'] as const) {
      const dir = join(ws.dir, name)
      const gw = await startGateway({ dir }, mocks, {
        binary: false,
        root: opts.root,
        // The cap set, so serve does not re-run itself and the probed process is the server.
        env: { BUN_CONFIG_MAX_HTTP_REQUESTS: '4096' },
        bunFlags: opts.bunFlags?.(name),
      })
      gateways.push(gw)
      const target =
        name === 'metered'
          ? chatTarget(gw.url, `mock/${PRICED_MODEL}`, opts.stream, await meteredKey(gw, dir, false))
          : chatTarget(gw.url, 'mock/bench', opts.stream, gw.key)
      sides.push({ name, pid: gw.pid, target })
    }
    await run(sides)
  } finally {
    for (const gw of gateways) await gw.stop()
    await mocks.stop()
    ws.remove()
  }
}

/**
 * The c=1 probes' route on `gw`: the plain key on `mock/bench`, or (`governed`) the lane's
 * governed key — TPM + TPD + a budget + a fallback, its own account — on the full model.
 */
export async function laneRoute(
  gw: Gateway,
  dir: string,
  governed: boolean,
  stream: boolean,
): Promise<LaneTarget> {
  const route = governed
    ? chatTarget(gw.url, `mock/${FULL_MODEL}`, stream, await meteredKey(gw, dir, false, 'bench-lane'))
    : chatTarget(gw.url, 'mock/bench', stream, gw.key)
  return { ...route, name: governed ? 'governed' : 'plain', stream }
}

export async function runTokens(
  ctx: Ctx,
  fwd: Forwarded,
  opts: { binary: boolean; env?: Record<string, string> },
): Promise<TokensResult> {
  // Under the bench's own workspace, so an interrupted bench removes it with its own.
  const dir = join(ctx.dir, 'twin')
  mkdirSync(dir)
  const ws = { dir, remove: () => rmSync(dir, { recursive: true, force: true }) }
  let twin: Gateway | null = null
  try {
    twin = await startGateway(ws, ctx.mocks, { binary: opts.binary, env: opts.env })
    const sides: [Side, Side] = [
      { ctx, key: { plain: ctx.gw.key, metered: await meteredKey(ctx.gw, ctx.dir, opts.binary) } },
      {
        ctx: { ...ctx, gw: twin, dir: ws.dir },
        key: { plain: twin.key, metered: await meteredKey(twin, ws.dir, opts.binary) },
      },
    ]
    const pairs = ctx.plan.pairs ?? 3 * ctx.plan.repeats + 1
    const seconds = Math.min(4, ctx.plan.closedS)
    const out = {} as TokensResult
    for (const mode of MODES) {
      const cell = { pairs: [] as number[], plain: [] as number[], metered: [] as number[] }
      out[mode] = cell
      const round = (routes: [Route, Route]) => crossRound(ctx, fwd, sides, routes, mode, seconds)
      // Each gateway warmed on both routes, a whole pair's length, even in a quick run (each route
      // has code of its own to compile; a second gateway started for this row has compiled
      // nothing: with shorter warm-ups, or none, the first pairs read 10–25 % dearer on both
      // routes, measured).
      await round(['plain', 'metered'])
      await round(['metered', 'plain'])
      for (let i = 0; i < pairs; i++) {
        const [p0, m1] = await round(['plain', 'metered'])
        const [m0, p1] = await round(['metered', 'plain'])
        const ratio = Math.sqrt((m1 / p0) * (m0 / p1))
        cell.pairs.push(ratio)
        cell.plain.push(p0, p1)
        cell.metered.push(m0, m1)
        ctx.log(
          `  ${mode} c${TOKENS_CONCURRENCY} pair ${i + 1}: first gateway ${Math.round(p0)} → ${Math.round(m0)} µs/req, second ${Math.round(p1)} → ${Math.round(m1)}: ${fmt(ratio, 3)} ×`,
        )
      }
    }
    return out
  } finally {
    await twin?.stop()
    ws.remove()
  }
}

/**
 * One round: both gateways loaded at once, each on its route (warmed on it first), for `seconds`;
 * each one's CPU per request over the same seconds.
 */
async function crossRound(
  ctx: Ctx,
  fwd: Forwarded,
  sides: [Side, Side],
  routes: [Route, Route],
  mode: Mode,
  seconds: number,
): Promise<[number, number]> {
  const stream = mode === 'stream'
  const load = (s: number) =>
    Promise.all(
      sides.map((side, i) =>
        closedLoad(
          side.ctx,
          chatTarget(side.ctx.gw.url, `mock/${PRICED_MODEL}`, stream, side.key[routes[i]!]),
          TOKENS_CONCURRENCY,
          s,
        ),
      ),
    )
  const twins = [sides[1].ctx.gw]
  return counted(
    ctx,
    fwd,
    !ctx.wrk,
    async () => {
      if (ctx.plan.warmS > 0) await load(ctx.plan.warmS)
      const cpu0 = sides.map((s) => cpuMicros(s.ctx.gw.pid))
      const runs = await load(seconds)
      return sides.map((s, i) => (cpuMicros(s.ctx.gw.pid) - cpu0[i]!) / Math.max(1, runs[i]!.requests)) as [
        number,
        number,
      ]
    },
    twins,
  )
}

export function tokensRows(result: TokensResult): Row[] {
  return MODES.map((mode) => {
    const r = result[mode]
    const paired = series(r.pairs)
    const plain = series(r.plain)
    const metered = series(r.metered)
    const what = mode === 'stream' ? 'stream' : 'non-stream'
    return row(
      `gateway CPU per request, ${what} c${TOKENS_CONCURRENCY}: TPM, TPD and a budget (reserve + settle) vs no token limits, two gateways crossed over`,
      `${fmtSeries(paired, 3, '×')} pair by pair; ${fmtSeries(metered, 0, 'µs')} vs ${fmtSeries(plain, 0, 'µs')} (medians: ${fmt(metered.median / plain.median, 3)} ×)`,
      paired.median,
      { op: '<=', value: 1.1, text: '≤ 1.10 ×' },
    )
  })
}
