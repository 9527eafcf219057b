/**
 * @module
 * `bun run bench`'s command line: its flags (USAGE), the run's plans by size (full, --quick, and
 * the smoke CI runs under SWITCHYARD_BENCH_SMOKE=1) and the checks between flags.
 */
import type { LaneSize } from './c1-lane.ts'
import { STEADY_FULL, STEADY_NONE, STEADY_QUICK } from './c1-warm.ts'
import type { Plan } from './scenarios.ts'

/** The account volume of the /v1/usage row (issue 9: 2,000,000 requests in the window). */
export const USAGE_ROWS = 2_000_000

export const FULL: Plan = {
  repeats: 3,
  warmS: 1,
  closedS: 5,
  concurrencies: [16, 64],
  openRate: 200,
  openWarmS: 2,
  openS: 10,
  streams: 1000,
  streamsOpenTimeoutS: 10,
  streamsHoldS: 3,
  microIterations: 20_000,
}

/** One short run of each scenario (about five minutes in all, the waterfall included). */
export const QUICK: Plan = {
  repeats: 1,
  warmS: 0,
  closedS: 2,
  concurrencies: [16, 64],
  openRate: 200,
  openWarmS: 0.5,
  openS: 2,
  streams: 1000,
  streamsOpenTimeoutS: 6,
  streamsHoldS: 1,
  microIterations: 3_000,
}

/**
 * `SWITCHYARD_BENCH_SMOKE=1`: every section a run would start, each at about a second of load, so
 * that CI (.ci/doc-commands.sh) runs each command BENCHMARKS.md shows as pasted — its flags
 * parsed, every section started and stopped, every row computed — in seconds, not minutes. Its
 * figures are noise and say nothing about a target. Sections whose size is their own (the agent's
 * turns, the waterfall's cold rounds, the soak's warm-up) keep it. `--quick` and `--binary`
 * (without a section flag) run only what they change, not every section again (alone.ts).
 */
export const SMOKE_ENV = 'SWITCHYARD_BENCH_SMOKE'
/**
 * With the smoke: the command lines CI runs beside the plain one (.ci/doc-commands.sh puts them all
 * here). The plain `bun run bench` leaves out each section one of them names by its flag
 * (`--waterfall`, `--c1`, …), which that line runs alone: every section is smoke-run once, not
 * twice (the plain line's smoke was ~220 s of CI's 15 minutes, these sections most of it).
 */
export const SMOKE_ALONE_ENV = 'SWITCHYARD_BENCH_SMOKE_ALONE'

/** The sections a flag of their name runs alone (alone.ts). */
export const SECTIONS = [
  'c1',
  'waterfall',
  'tokens',
  'hostile',
  'signals',
  'aliases',
  'gemini',
  'agent',
] as const
export type SectionKind = (typeof SECTIONS)[number]
export const SMOKE: Plan = {
  repeats: 1,
  warmS: 0,
  closedS: 1,
  concurrencies: [16],
  openRate: 50,
  openWarmS: 0,
  openS: 1,
  streams: 50,
  streamsOpenTimeoutS: 6,
  streamsHoldS: 1,
  microIterations: 200,
  cold: { s: 0.25, warmS: 0 },
  // Two: rounds of both orders still run (signals.ts swaps the pair of gateways every second pair).
  pairs: 2,
}
export const LANE_FULL: LaneSize = {
  rounds: 20,
  batch: 100,
  warm: 200,
  steady: STEADY_FULL,
  gapRequests: 100,
  tracedRounds: 10,
}
export const LANE_QUICK: LaneSize = {
  rounds: 4,
  batch: 50,
  warm: 50,
  steady: STEADY_QUICK,
  gapRequests: 20,
  tracedRounds: 4,
}
export const LANE_SMOKE: LaneSize = {
  rounds: 1,
  batch: 10,
  warm: 5,
  steady: STEADY_NONE,
  gapRequests: 2,
  tracedRounds: 1,
}
/** The smoke's /v1/usage and request-log volumes (rows). */
export const SMOKE_ROWS = 2_000
/** The smoke's soak, in minutes (whatever `--soak` said): its 20-s warm-up and a few seconds more. */
export const SMOKE_SOAK_MINUTES = 0.1

const USAGE = `usage: bun run bench [--quick] [--binary] [--no-wrk] [--keep] [--gateway-env K=V] [--cpu-prof] [--soak MINUTES] [--waterfall] [--tokens] [--hostile] [--signals] [--agent] [--aliases] [--gemini] [--c1]
       bun run bench --backend postgres|redis [--quick]
  --quick        fewer, shorter runs (about five minutes)
  --binary       benchmark dist/switchyard (run \`bun run build\` first) instead of the source
  --no-wrk       use the Bun load generator even when wrk is installed
  --keep         keep the temporary directory (config, database, gateway log)
  --gateway-env K=V   extra environment for the gateway process (repeatable); with
                 BUN_CONFIG_MAX_HTTP_REQUESTS set, serve runs without its supervisor
  --cpu-prof     profile the gateway (source only); the profile lands in bench-results/
  --soak MINUTES mixed traffic with upstream faults, slow streams and client aborts
  --waterfall    only the cost waterfall: the full path, then one piece off at a time (c64)
  --tokens       only the tokens-and-money row: TPM, TPD and a budget vs no token limits (c16, two gateways)
  --hostile      only the hostile-input load rows: 48 × 10 MB chat and 16 × 9 MB count_tokens bodies
                 from one key vs valid traffic of the same size (peak RSS growth, /healthz p99)
  --signals      only the telemetry and webhook rows: each vs neither, and a second gateway with neither (c16, two gateways at once)
  --agent        only the agent-like row: 4 conversations of 30 turns growing to ~150 KB, metered vs plain key
  --aliases      only the alias and pool rows: a model named through an alias, and a 1:1 pool, vs directly (c16)
  --gemini       only the Gemini-surface rows: translated beside chat, pass-through beside direct (c16)
  --c1           only the c=1 lane: added p50/p99/p99.9 of Caddy (when found), the bare prototype and the
                 gateway (plain, governed) over direct, one request at a time; the traced gateway's timeline
  --baseline DIR with --c1: another checkout's gateway (DIR/src/main.ts) in the same rounds, the -before rows
  --backend B    SQLite next to PostgreSQL (postgres) or PostgreSQL + Redis (redis), each started
                 throwaway: throughput, CPU, the admission's cost, and two replicas behind one generator
  ${SMOKE_ENV}=1 (environment) every section at about a second of load (CI runs each command so);
                 --quick, --binary: only the closed loop, on QUICK's plan or dist/switchyard
  ${SMOKE_ALONE_ENV}='LINE …' (environment, with the smoke) the other bench lines run beside
                 this one: the plain run leaves out each section they name by its flag`

export interface Options {
  quick: boolean
  /** ${SMOKE_ENV}=1: every section shrunk to seconds (SMOKE). */
  smoke: boolean
  /** With the smoke: the sections other lines run alone (${SMOKE_ALONE_ENV}), which the plain run leaves out. */
  smokeAlone: SectionKind[]
  binary: boolean
  noWrk: boolean
  keep: boolean
  soakMinutes: number | null
  gatewayEnv: Record<string, string>
  cpuProf: boolean
  backend: 'postgres' | 'redis' | null
  waterfall: boolean
  tokens: boolean
  hostile: boolean
  signals: boolean
  agent: boolean
  aliases: boolean
  gemini: boolean
  c1: boolean
  baseline: string | undefined
}

export function parseArgs(argv: string[]): Options {
  const o: Options = {
    quick: false,
    smoke: process.env[SMOKE_ENV] === '1',
    smokeAlone: [],
    binary: false,
    noWrk: false,
    keep: false,
    soakMinutes: null,
    gatewayEnv: {},
    cpuProf: false,
    backend: null,
    waterfall: false,
    tokens: false,
    hostile: false,
    signals: false,
    agent: false,
    aliases: false,
    gemini: false,
    c1: false,
    baseline: undefined,
  }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    if (a === '--quick') o.quick = true
    else if (a === '--binary') o.binary = true
    else if (a === '--no-wrk') o.noWrk = true
    else if (a === '--keep') o.keep = true
    else if (a === '--cpu-prof') o.cpuProf = true
    else if (a === '--waterfall') o.waterfall = true
    else if (a === '--tokens') o.tokens = true
    else if (a === '--aliases') o.aliases = true
    else if (a === '--c1') o.c1 = true
    else if (a === '--baseline') {
      o.baseline = argv[++i]
      if (!o.baseline) fail('--baseline needs a directory (another checkout: its src/main.ts)')
    } else if (a === '--hostile') o.hostile = true
    else if (a === '--signals') o.signals = true
    else if (a === '--agent') o.agent = true
    else if (a === '--gemini') o.gemini = true
    else if (a === '--backend') {
      const b = argv[++i]
      if (b !== 'postgres' && b !== 'redis') fail('--backend needs postgres or redis')
      o.backend = b
    } else if (a === '--gateway-env') {
      const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(argv[++i] ?? '')
      if (!m) fail('--gateway-env needs NAME=VALUE')
      o.gatewayEnv[m[1]!] = m[2]!
    } else if (a === '--soak') {
      const m = Number(argv[++i])
      if (!Number.isFinite(m) || m <= 0 || m > 24 * 60)
        fail('--soak needs a number of minutes (0 < m ≤ 1440)')
      o.soakMinutes = m
    } else if (a === '--help' || a === '-h') {
      console.log(USAGE)
      process.exit(0)
    } else fail(`unknown argument '${a}'`)
  }
  if (
    [o.waterfall, o.tokens, o.hostile, o.signals, o.agent, o.aliases, o.gemini, o.c1].filter(Boolean).length >
    1
  )
    fail(
      '--waterfall, --tokens, --hostile, --signals, --agent, --aliases, --gemini and --c1 each run alone; pick one',
    )
  if (o.cpuProf && o.binary) fail('--cpu-prof profiles the source gateway; drop --binary')
  if (o.smoke) {
    if (o.soakMinutes !== null) o.soakMinutes = SMOKE_SOAK_MINUTES
    const named = new Set((process.env[SMOKE_ALONE_ENV] ?? '').split(/\s+/))
    o.smokeAlone = SECTIONS.filter((s) => named.has(`--${s}`))
    console.error(
      `bench: ${SMOKE_ENV}=1, every section at about a second of load, --quick and --binary only what they change (its figures are noise)`,
    )
  }
  return o
}

function fail(msg: string): never {
  console.error(`bench: ${msg}\n${USAGE}`)
  process.exit(2)
}
