/**
 * `bun run bench [--quick] [--binary] [--no-wrk] [--keep] [--soak MINUTES]`
 *
 * Starts the mock upstreams, the real gateway as its own process (the source, or
 * `dist/switchyard` with --binary) on a temporary config and database, and a load generator
 * (wrk when installed, else a Bun generator in its own process); then measures throughput,
 * latency, added latency, CPU per request and memory against the targets in BENCHMARKS.md,
 * prints a markdown table and writes bench-results/<timestamp>.json. `--soak` runs the
 * fault/soak mode instead (scripts/bench/soak.ts).
 */
import { Database } from 'bun:sqlite'
import { join } from 'node:path'
import { AFFINITY_CONCURRENCY, affinityRows, runAffinity } from './bench/affinity.ts'
import { AGENT_CONVERSATIONS, AGENT_TURNS, agentRows, runAgent } from './bench/agent.ts'
import { ALIASES_CONCURRENCY, aliasesRows, runAliases } from './bench/aliases.ts'
import { runBackendBench } from './bench/backends.ts'
import { bareRows, runBareProxy } from './bench/bare.ts'
import { LANE_FULL, LANE_QUICK, type LaneSize, laneRows, runLane } from './bench/c1-lane.ts'
import { EMBEDDINGS_CONCURRENCY, embeddingsRows, runEmbeddings } from './bench/embeddings-load.ts'
import { FALLBACK_CONCURRENCY, fallbackRows, runFallback } from './bench/fallback.ts'
import { GEMINI_CONCURRENCY, geminiRows, runGeminiSurface } from './bench/gemini.ts'
import { runHostileInput } from './bench/hostile-input.ts'
import { hostileLoadRows, runHostileLoad } from './bench/hostile-load.ts'
import { runBunLoad } from './bench/loadgen-bun.ts'
import { findWrk } from './bench/loadgen-wrk.ts'
import { runMicro } from './bench/micro.ts'
import { machineInfo, rssBytes, statusBytes } from './bench/proc-stats.ts'
import {
  type Gateway,
  gatewayCli,
  type Mocks,
  REPO,
  startGateway,
  startMocks,
  workspace,
} from './bench/processes.ts'
import { fmt, type Row, renderTable, row, writeResults } from './bench/report.ts'
import { requestLogRows } from './bench/request-log.ts'
import { RESPONSES_CONCURRENCY, responsesRows, runResponses } from './bench/responses.ts'
import {
  closedRows,
  forwardingRows,
  hostileInputRows,
  memoryRows,
  microRows,
  openRows,
  usageVolumeRows,
} from './bench/rows.ts'
import {
  type Ctx,
  counted,
  newForwarded,
  type Plan,
  runClosedMatrix,
  runMessagesPassThrough,
  runOpenLoopMatrix,
  runSlowStreams,
} from './bench/scenarios.ts'
import { runSignals, SIGNALS_CONCURRENCY, signalsRows } from './bench/signals.ts'
import { runSoak } from './bench/soak.ts'
import { runTokens, TOKENS_CONCURRENCY, tokensRows } from './bench/tokens.ts'
import { runUsageVolume } from './bench/usage-volume.ts'
import { runWaterfall, WATERFALL_CONCURRENCY, waterfallRows } from './bench/waterfall.ts'
import { chatTarget } from './bench/workload.ts'

/** The account volume of the /v1/usage row (issue 9: 2,000,000 requests in the window). */
const USAGE_ROWS = 2_000_000

const FULL: Plan = {
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
const QUICK: Plan = {
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
 * that CI (.ci/run) runs each command BENCHMARKS.md shows as pasted — its flags parsed, every
 * section started and stopped, every row computed — in seconds, not minutes. Its figures are
 * noise and say nothing about a target. Sections whose size is their own (the agent's turns, the
 * waterfall's cold rounds, the soak's warm-up) keep it.
 */
const SMOKE_ENV = 'SWITCHYARD_BENCH_SMOKE'
const SMOKE: Plan = {
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
}
const LANE_SMOKE: LaneSize = { rounds: 1, batch: 10, warm: 5, gapRequests: 2, tracedRounds: 1 }
/** The smoke's /v1/usage and request-log volumes (rows). */
const SMOKE_ROWS = 2_000
/** The smoke's soak, in minutes (whatever `--soak` said): its 20-s warm-up and a few seconds more. */
const SMOKE_SOAK_MINUTES = 0.1

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
  ${SMOKE_ENV}=1 (environment) every section at about a second of load (CI runs each command so)`

interface Options {
  quick: boolean
  /** ${SMOKE_ENV}=1: every section shrunk to seconds (SMOKE). */
  smoke: boolean
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

function parseArgs(argv: string[]): Options {
  const o: Options = {
    quick: false,
    smoke: process.env[SMOKE_ENV] === '1',
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
    console.error(`bench: ${SMOKE_ENV}=1, every section at about a second of load (its figures are noise)`)
  }
  return o
}

function fail(msg: string): never {
  console.error(`bench: ${msg}\n${USAGE}`)
  process.exit(2)
}

const log = (line: string) => console.error(line)

/** Requests the gateway recorded as cancelled by their client (499). */
function countClientClosed(dbPath: string): number {
  const db = new Database(dbPath, { readonly: true })
  try {
    return db.query<{ n: number }, []>('SELECT COUNT(*) AS n FROM requests WHERE status = 499').get()!.n
  } finally {
    db.close()
  }
}

function toolVersions(gw: Gateway, wrk: ReturnType<typeof findWrk>) {
  return {
    bun: Bun.version,
    bunRevision: Bun.revision.slice(0, 9),
    wrk: wrk?.version ?? null,
    gateway: gw.mode,
  }
}

async function main(): Promise<number> {
  const opts = parseArgs(process.argv.slice(2))
  if (opts.backend) {
    const table = await runBackendBench(opts.backend, opts.quick || opts.smoke, log)
    console.log(`\n${table}\n`)
    const path = writeResults(REPO, { kind: `backend-${opts.backend}`, machine: machineInfo(), table })
    log(`results: ${path}`)
    return 0
  }
  const started = performance.now()
  const wrk = opts.noWrk ? null : findWrk()
  const ws = workspace()
  let mocks: Mocks | undefined
  let gw: Gateway | undefined
  try {
    // Ctrl-C must not leave a gateway serving on behind us.
    const interrupted = () =>
      void (async () => {
        await gw?.stop()
        await mocks?.stop()
        ws.remove()
        process.exit(130)
      })()
    process.once('SIGINT', interrupted)
    process.once('SIGTERM', interrupted)
    mocks = await startMocks(20)
    const profDir = join(REPO, 'bench-results', 'profiles')
    // serve re-runs itself to set Bun's fetch cap unless it is set, and bun flags such as
    // --cpu-prof do not follow it there: set the cap so the profiled process is the server.
    const env =
      opts.cpuProf && !opts.gatewayEnv.BUN_CONFIG_MAX_HTTP_REQUESTS
        ? { ...opts.gatewayEnv, BUN_CONFIG_MAX_HTTP_REQUESTS: '4096' }
        : opts.gatewayEnv
    gw = await startGateway(ws, mocks, {
      binary: opts.binary,
      env,
      bunFlags: opts.cpuProf ? ['--cpu-prof', '--cpu-prof-md', `--cpu-prof-dir=${profDir}`] : [],
    })
    if (opts.cpuProf) log(`gateway CPU profile → ${profDir} (written when the gateway exits)`)
    const machine = machineInfo()
    const command = `bun run bench${process.argv.slice(2).length ? ` ${process.argv.slice(2).join(' ')}` : ''}`
    const envText = Object.entries(env)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')
    log(
      `gateway: ${gw.mode} (${gw.command.slice(0, 4).join(' ')} ...), pid ${gw.pid}` +
        `${gw.supervisorPid ? ` (supervisor ${gw.supervisorPid})` : ''}, ${gw.url}${envText ? `, env ${envText}` : ''}`,
    )
    log(
      `load generator: ${wrk ? `wrk ${wrk.version} (closed loop) + Bun open-loop generator` : 'Bun generators (wrk not found)'}`,
    )
    log(`machine: ${machine.nproc} CPUs, ${machine.cpu}, ${machine.memoryGiB} GiB; bun ${Bun.version}`)

    if (opts.soakMinutes !== null) {
      const soak = await runSoak({ gw, mocks, dir: ws.dir, minutes: opts.soakMinutes, log })
      console.log(soak.markdown)
      const path = writeResults(REPO, {
        kind: 'soak',
        command,
        machine,
        versions: toolVersions(gw, wrk),
        ...soak.doc,
      })
      log(`results: ${path}`)
      // The smoke runs the soak for seconds, where its verdict (outcomes, growth) is noise: it
      // fails only when the gateway did not live through it.
      if (opts.smoke) return gw.exitCode() === null ? 0 : 1
      return soak.ok ? 0 : 1
    }

    const plan = opts.smoke ? SMOKE : opts.quick ? QUICK : FULL
    /** The smaller runs: --quick, or the smoke (whose plan is smaller still). */
    const short = opts.quick || opts.smoke
    const ctx: Ctx = { gw, mocks, wrk: wrk, dir: ws.dir, plan, log }
    const fwd = newForwarded()
    // Warm the gateway's JIT and connection pool before anything is measured.
    log('warm-up ...')
    for (const stream of [false, true]) {
      const t = chatTarget(gw.url, 'mock/bench', stream, gw.key)
      await counted(ctx, fwd, true, () => runBunLoad(t, 16, short ? 1 : 2))
    }

    const laneOpts = {
      binary: opts.binary,
      env,
      size: opts.smoke ? LANE_SMOKE : opts.quick ? LANE_QUICK : LANE_FULL,
      timeline: !opts.binary,
      baseline: opts.baseline,
    }
    if (
      opts.waterfall ||
      opts.tokens ||
      opts.hostile ||
      opts.signals ||
      opts.agent ||
      opts.aliases ||
      opts.gemini ||
      opts.c1
    ) {
      const [kind, title] = opts.c1
        ? ['c1', 'The c=1 lane']
        : opts.waterfall
          ? ['waterfall', 'Waterfall']
          : opts.tokens
            ? ['tokens', 'Tokens and money']
            : opts.hostile
              ? ['hostile', 'Hostile input']
              : opts.signals
                ? ['signals', 'Telemetry and webhooks']
                : opts.aliases
                  ? ['aliases', 'Aliases and pools']
                  : opts.gemini
                    ? ['gemini', 'Gemini surface']
                    : ['agent', 'Agent-like']
      let rows: Row[]
      /** What a row keeps beyond its table (the lane's timelines). */
      let detail: unknown = null
      if (opts.c1) {
        log('the c=1 lane: one request at a time, interleaved rounds, added over direct ...')
        const lane = await runLane(ctx, laneOpts)
        rows = laneRows(lane)
        detail = { timeline: lane.timeline, timelineBefore: lane.timelineBefore }
      } else if (opts.aliases) {
        log(
          `an alias and a 1:1 pool, c${ALIASES_CONCURRENCY}: CPU per request vs the model named directly ...`,
        )
        rows = aliasesRows(await runAliases(ctx, fwd))
      } else if (opts.gemini) {
        log(`Gemini surface, stream, c${GEMINI_CONCURRENCY}: chat, translated, direct, pass-through ...`)
        rows = geminiRows(await runGeminiSurface(ctx, fwd))
      } else if (opts.hostile) {
        log('hostile input from one key vs valid traffic of the same size (a gateway of its own) ...')
        const seconds = opts.smoke ? 1 : opts.quick ? 3 : 10
        rows = hostileLoadRows(await runHostileLoad(ws, mocks, { binary: opts.binary, env, seconds, log }))
      } else if (opts.agent) {
        log(
          `agent-like conversations, ${AGENT_CONVERSATIONS} × ${AGENT_TURNS} turns: metered vs plain key ...`,
        )
        rows = agentRows(await runAgent(ctx, plan.repeats, opts.binary))
      } else if (opts.waterfall) {
        log(`cost waterfall, c${WATERFALL_CONCURRENCY}: the full path, then one piece off at a time ...`)
        rows = waterfallRows(await runWaterfall(ctx, opts.binary))
      } else if (opts.signals) {
        log(`telemetry and a webhook, c${SIGNALS_CONCURRENCY}: CPU per request vs neither ...`)
        rows = signalsRows(
          await runSignals(ctx, fwd, {
            binary: opts.binary,
            env,
            // --cpu-prof: each of the row's gateways (off, telemetry, webhook) writes its profile too.
            bunFlags: opts.cpuProf ? ['--cpu-prof', '--cpu-prof-md', `--cpu-prof-dir=${profDir}`] : [],
          }),
        )
      } else {
        log(`TPM, TPD and a budget, c${TOKENS_CONCURRENCY}: CPU per request vs the same route without ...`)
        rows = tokensRows(await runTokens(ctx, fwd, { binary: opts.binary, env }))
      }
      const seconds = (performance.now() - started) / 1000
      console.log(
        `\n${title} only, ${opts.smoke ? 'smoke' : opts.quick ? 'quick' : 'full'} run, ${plan.repeats}× per row, ${seconds.toFixed(0)} s. Machine: ${machine.nproc} × ${machine.cpu}, bun ${Bun.version}, load: ${wrk ? `wrk ${wrk.version}` : 'Bun generator'}.\n\n${renderTable(rows)}\n`,
      )
      log(`results: ${writeResults(REPO, { kind, command, machine, plan, seconds, rows, detail })}`)
      return gw.exitCode() === null ? 0 : 1
    }
    log('the c=1 lane: one request at a time, interleaved rounds, added over direct ...')
    const lane = await runLane(ctx, laneOpts)
    log('closed loop (throughput, latency) ...')
    const closed = await runClosedMatrix(ctx, fwd)
    log('the bare prototype (key lookup, counter, fetch, pipe) vs direct, same concurrency ...')
    const bare = await runBareProxy(ctx)
    log('messages pass-through stream vs direct to the Anthropic mock ...')
    const messages = await runMessagesPassThrough(ctx)
    log(`Responses surface, stream, c${RESPONSES_CONCURRENCY}: direct, translated, pass-through ...`)
    const responses = await runResponses(ctx, fwd)
    log(`Gemini surface, stream, c${GEMINI_CONCURRENCY}: chat, translated, direct, pass-through ...`)
    const gemini = await runGeminiSurface(ctx, fwd)
    log(`embeddings, c${EMBEDDINGS_CONCURRENCY}, base64 and float: direct, pass-through, demo vectors ...`)
    const embeddings = await runEmbeddings(ctx, fwd)
    log(
      `a fallback configured, no fault, c${FALLBACK_CONCURRENCY}: CPU per request vs the same route without ...`,
    )
    const fallback = await runFallback(ctx, fwd)
    log(`an alias and a 1:1 pool, c${ALIASES_CONCURRENCY}: CPU per request vs the model named directly ...`)
    const aliases = await runAliases(ctx, fwd)
    log(`a pool of two keys, c${AFFINITY_CONCURRENCY}: requests carrying a prompt_cache_key vs none ...`)
    const affinity = await runAffinity(ctx, fwd)
    log(`TPM, TPD and a budget, c${TOKENS_CONCURRENCY}: CPU per request vs the same route without ...`)
    const tokens = await runTokens(ctx, fwd, { binary: opts.binary, env })
    log(`telemetry and a webhook, c${SIGNALS_CONCURRENCY}: CPU per request vs neither ...`)
    const signals = await runSignals(ctx, fwd, { binary: opts.binary, env })
    log(`agent-like conversations, ${AGENT_CONVERSATIONS} × ${AGENT_TURNS} turns: metered vs plain key ...`)
    const agent = await runAgent(ctx, plan.repeats, opts.binary)
    log(`cost waterfall, c${WATERFALL_CONCURRENCY}: the full path, then one piece off at a time ...`)
    const waterfall = await runWaterfall(ctx, opts.binary)
    log(`open loop at ${plan.openRate} req/s, mock 50 ms (added latency) ...`)
    const open = await runOpenLoopMatrix(ctx, fwd)
    const clientClosed = countClientClosed(gw.dbPath)
    const rssRightAfter = rssBytes(gw.pid)
    // Then idle for a moment: the gateway gives memory back once no request came for a second.
    await Bun.sleep(3000)
    const rssAfterLoad = rssBytes(gw.pid)
    const hwmAfterLoad = statusBytes(gw.pid, 'VmHWM')
    const supervisorRss = gw.supervisorPid === null ? null : rssBytes(gw.supervisorPid)
    log(`${plan.streams} slow streams (one event per second) ...`)
    const streams = await runSlowStreams(ctx)
    log('micro-benchmark: auth + limiter + usage recording ...')
    const micro = await runMicro(ws.dir, mocks, plan.microIterations)
    log('hostile input: 10 MB request bodies, a 50 MB SSE line ...')
    const hostile = await runHostileInput(opts.smoke ? 1 : opts.quick ? 3 : 9)
    log('hostile input from one key vs valid traffic of the same size (a gateway of its own) ...')
    const hostileLoad = await runHostileLoad(ws, mocks, {
      binary: opts.binary,
      env,
      seconds: opts.smoke ? 1 : opts.quick ? 3 : 10,
      log,
    })
    const usageRows = opts.smoke ? SMOKE_ROWS : USAGE_ROWS
    log(`GET /v1/usage on an account with ${fmt(usageRows)} requests in its day ...`)
    const usageVolume = await runUsageVolume(gw, gatewayCli(opts.binary), usageRows, 19)
    log(`  (${fmt(usageVolume.rows)} requests written in ${usageVolume.fillSeconds.toFixed(1)} s)`)
    const exit = gw.exitCode()
    log('request log: every filter and page ...')
    const logRows = await requestLogRows(
      ws.dir,
      opts.smoke ? SMOKE_ROWS : opts.quick ? 200_000 : 1_000_000,
      log,
    )

    const rows: Row[] = [
      ...laneRows(lane),
      ...closedRows({ ...closed, ...messages }),
      ...bareRows(bare, closed),
      ...responsesRows(responses),
      ...geminiRows(gemini),
      ...embeddingsRows(embeddings),
      ...fallbackRows(fallback),
      ...aliasesRows(aliases),
      ...affinityRows(affinity),
      ...tokensRows(tokens),
      ...signalsRows(signals),
      ...agentRows(agent),
      ...waterfallRows(waterfall),
      ...openRows(open, plan.openRate),
      ...memoryRows(rssAfterLoad, streams, supervisorRss, rssRightAfter),
      ...microRows(micro),
      ...hostileInputRows(hostile),
      ...hostileLoadRows(hostileLoad),
      ...usageVolumeRows(usageVolume),
      ...forwardingRows(fwd, clientClosed),
      ...logRows,
      row(
        'gateway process alive at the end',
        exit === null ? 'yes' : `no (exit ${exit})`,
        exit === null ? 0 : 1,
        {
          op: '==',
          value: 0,
          text: 'yes',
        },
      ),
    ]
    const seconds = (performance.now() - started) / 1000
    const header =
      `Gateway: **${gw.mode}** (\`${gw.command.slice(0, 3).join(' ')}\`${envText ? `, env \`${envText}\`` : ''}), load: ${wrk ? `wrk ${wrk.version} (closed loop), Bun open-loop generator` : 'Bun generators (no wrk)'}; ` +
      `${opts.smoke ? 'smoke' : opts.quick ? 'quick' : 'full'} run, ${plan.repeats}× per scenario (median, min–max), ${seconds.toFixed(0)} s. ` +
      `Machine: ${machine.nproc} × ${machine.cpu}, ${machine.memoryGiB} GiB, bun ${Bun.version}.`
    console.log(`\n${header}\n\n${renderTable(rows)}\n`)
    const path = writeResults(REPO, {
      kind: opts.smoke ? 'smoke' : opts.quick ? 'quick' : 'full',
      command,
      machine,
      versions: toolVersions(gw, wrk),
      gatewayEnv: env,
      plan,
      seconds,
      rows,
      closed,
      bare,
      lane: { ...lane, samples: undefined },
      responses,
      open,
      rssAfterLoadBytes: rssAfterLoad,
      rssRightAfterLoadBytes: rssRightAfter,
      hwmAfterLoadBytes: hwmAfterLoad,
      supervisorRssBytes: supervisorRss,
      streams,
      micro,
      usageVolume,
      forwarding: { ...fwd, clientClosed },
    })
    log(`results: ${path}`)
    const misses = rows.filter((r) => r.result === 'miss').length
    log(
      `${rows.filter((r) => r.result === 'pass').length} pass, ${misses} miss (misses are reported, not failed)`,
    )
    return exit === null ? 0 : 1
  } finally {
    await gw?.stop()
    await mocks?.stop()
    if (opts.keep) log(`kept ${ws.dir}`)
    else ws.remove()
  }
}

process.exit(await main())
