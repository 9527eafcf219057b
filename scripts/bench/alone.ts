/**
 * @module
 * The parts of `bun run bench` a flag runs alone (`--c1`, `--waterfall`, `--tokens`, `--hostile`,
 * `--signals`, `--agent`, `--aliases`, `--gemini`): which one the command line names, and running
 * it on the gateway and mocks scripts/bench.ts started.
 *
 * Under the smoke (SWITCHYARD_BENCH_SMOKE=1, what CI runs) `--quick` and `--binary` without a
 * section flag run only what the flag changes, where they ran every section again (three whole
 * benches in CI, ~10 minutes of a loaded machine's 15): `--quick` its plan (QUICK, as a real
 * quick run takes it) on the closed loop, both modes at c16 and c64; `--binary` dist/switchyard
 * served (the gateway scripts/bench.ts started) and one short closed-loop round against it. The
 * plain `bun run bench` line runs every section once, but those CI runs on a line of their own
 * (SWITCHYARD_BENCH_SMOKE_ALONE, options.ts).
 */
import { AGENT_CONVERSATIONS, AGENT_TURNS, agentRows, runAgent } from './agent.ts'
import { ALIASES_CONCURRENCY, aliasesRows, runAliases } from './aliases.ts'
import { type LaneOptions, laneRows, runLane } from './c1-lane.ts'
import { GEMINI_CONCURRENCY, geminiRows, runGeminiSurface } from './gemini.ts'
import { hostileLoadRows, runHostileLoad } from './hostile-load.ts'
import type { Options, SectionKind } from './options.ts'
import type { Workspace } from './processes.ts'
import type { Row } from './report.ts'
import { closedRows } from './rows.ts'
import { type Ctx, type Forwarded, runClosedMatrix } from './scenarios.ts'
import { runSignals, SIGNALS_CONCURRENCY, signalsRows } from './signals.ts'
import { runTokens, TOKENS_CONCURRENCY, tokensRows } from './tokens.ts'
import { runWaterfall, WATERFALL_CONCURRENCY, waterfallRows } from './waterfall.ts'

/** A section flag's part, or under the smoke what --quick or --binary changes. */
export type AloneKind = SectionKind | 'smoke-quick' | 'smoke-binary'

export interface AlonePart {
  /** The results file's `kind`. */
  kind: AloneKind
  /** The table's title ("… only"). */
  title: string
}

const PARTS: Array<[keyof Options & SectionKind, string]> = [
  ['c1', 'The c=1 lane'],
  ['waterfall', 'Waterfall'],
  ['tokens', 'Tokens and money'],
  ['hostile', 'Hostile input'],
  ['signals', 'Telemetry and webhooks'],
  ['aliases', 'Aliases and pools'],
  ['gemini', 'Gemini surface'],
  ['agent', 'Agent-like'],
]

/** The part the flags name (parseArgs lets at most one through), or null: the whole run. */
export function alonePart(opts: Options): AlonePart | null {
  const hit = PARTS.find(([flag]) => opts[flag])
  if (hit) return { kind: hit[0], title: hit[1] }
  if (!opts.smoke) return null
  if (opts.quick) return { kind: 'smoke-quick', title: "--quick's part (its plan, the closed loop)" }
  if (opts.binary)
    return { kind: 'smoke-binary', title: "--binary's part (dist/switchyard, the closed loop)" }
  return null
}

export interface AloneArgs {
  ctx: Ctx
  fwd: Forwarded
  opts: Options
  ws: Workspace
  env: Record<string, string>
  /** Where --cpu-prof profiles land. */
  profDir: string
  laneOpts: LaneOptions
}

/** Runs one part; `detail` is what its results keep beyond the table (the lane's timelines). */
export async function runAlone(part: AlonePart, a: AloneArgs): Promise<{ rows: Row[]; detail: unknown }> {
  const { ctx, fwd, opts, env } = a
  const log = ctx.log
  switch (part.kind) {
    case 'c1': {
      log('the c=1 lane: one request at a time, interleaved rounds, added over direct ...')
      const lane = await runLane(ctx, a.laneOpts)
      return {
        rows: laneRows(lane),
        detail: { timeline: lane.timeline, timelineBefore: lane.timelineBefore },
      }
    }
    case 'aliases':
      log(`an alias and a 1:1 pool, c${ALIASES_CONCURRENCY}: CPU per request vs the model named directly ...`)
      return { rows: aliasesRows(await runAliases(ctx, fwd)), detail: null }
    case 'gemini':
      log(`Gemini surface, stream, c${GEMINI_CONCURRENCY}: chat, translated, direct, pass-through ...`)
      return { rows: geminiRows(await runGeminiSurface(ctx, fwd)), detail: null }
    case 'hostile': {
      log('hostile input from one key vs valid traffic of the same size (a gateway of its own) ...')
      const seconds = opts.smoke ? 1 : opts.quick ? 3 : 10
      const r = await runHostileLoad(a.ws, ctx.mocks, { binary: opts.binary, env, seconds, log })
      return { rows: hostileLoadRows(r), detail: null }
    }
    case 'agent':
      log(`agent-like conversations, ${AGENT_CONVERSATIONS} × ${AGENT_TURNS} turns: metered vs plain key ...`)
      return { rows: agentRows(await runAgent(ctx, ctx.plan.repeats, opts.binary)), detail: null }
    case 'waterfall':
      log(`cost waterfall, c${WATERFALL_CONCURRENCY}: the full path, then one piece off at a time ...`)
      return { rows: waterfallRows(await runWaterfall(ctx, opts.binary)), detail: null }
    case 'signals': {
      log(`telemetry and a webhook, c${SIGNALS_CONCURRENCY}: CPU per request vs neither ...`)
      const r = await runSignals(ctx, fwd, {
        binary: opts.binary,
        env,
        // --cpu-prof: each of the row's gateways (off, telemetry, webhook) writes its profile too.
        bunFlags: opts.cpuProf ? ['--cpu-prof', '--cpu-prof-md', `--cpu-prof-dir=${a.profDir}`] : [],
      })
      return { rows: signalsRows(r), detail: null }
    }
    case 'smoke-quick':
    case 'smoke-binary':
      log(`smoke: ${part.title}: ${JSON.stringify(ctx.plan)}, on ${ctx.gw.mode} ...`)
      return { rows: closedRows(await runClosedMatrix(ctx, fwd)), detail: null }
    case 'tokens':
      log(`TPM, TPD and a budget, c${TOKENS_CONCURRENCY}: CPU per request vs the same route without ...`)
      return { rows: tokensRows(await runTokens(ctx, fwd, { binary: opts.binary, env })), detail: null }
  }
}
