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
import { alonePart, runAlone } from './bench/alone.ts'
import { runBackendBench } from './bench/backends.ts'
import { bareRows, runBareProxy } from './bench/bare.ts'
import { laneRows, runLane } from './bench/c1-lane.ts'
import { EMBEDDINGS_CONCURRENCY, embeddingsRows, runEmbeddings } from './bench/embeddings-load.ts'
import { FALLBACK_CONCURRENCY, fallbackRows, runFallback } from './bench/fallback.ts'
import { GEMINI_CONCURRENCY, geminiRows, runGeminiSurface } from './bench/gemini.ts'
import { runHostileInput } from './bench/hostile-input.ts'
import { hostileLoadRows, runHostileLoad } from './bench/hostile-load.ts'
import { runBunLoad } from './bench/loadgen-bun.ts'
import { findWrk } from './bench/loadgen-wrk.ts'
import { runMicro } from './bench/micro.ts'
import {
  FULL,
  LANE_FULL,
  LANE_QUICK,
  LANE_SMOKE,
  parseArgs,
  QUICK,
  type SectionKind,
  SMOKE,
  SMOKE_ROWS,
  USAGE_ROWS,
} from './bench/options.ts'
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

    const part = alonePart(opts)
    // The smoke's --quick part runs --quick's own plan (scripts/bench/alone.ts).
    const plan = part?.kind === 'smoke-quick' ? QUICK : opts.smoke ? SMOKE : opts.quick ? QUICK : FULL
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
    if (part) {
      const { rows, detail } = await runAlone(part, { ctx, fwd, opts, ws, env, profDir, laneOpts })
      const seconds = (performance.now() - started) / 1000
      console.log(
        `\n${part.title} only, ${opts.smoke ? 'smoke' : opts.quick ? 'quick' : 'full'} run, ${plan.repeats}× per row, ${seconds.toFixed(0)} s. Machine: ${machine.nproc} × ${machine.cpu}, bun ${Bun.version}, load: ${wrk ? `wrk ${wrk.version}` : 'Bun generator'}.\n\n${renderTable(rows)}\n`,
      )
      log(
        `results: ${writeResults(REPO, { kind: part.kind, command, machine, plan, seconds, rows, detail })}`,
      )
      return gw.exitCode() === null ? 0 : 1
    }
    /**
     * A section a flag runs alone: under the smoke, left out where another line CI runs names it
     * (SWITCHYARD_BENCH_SMOKE_ALONE, options.ts) — that line smoke-runs it — else run here.
     */
    const section = async <T>(kind: SectionKind, what: string, run: () => Promise<T>): Promise<T | null> => {
      if (opts.smokeAlone.includes(kind)) {
        log(`${what}: left to its own line's smoke (bun run bench --${kind})`)
        return null
      }
      log(`${what} ...`)
      return run()
    }
    const lane = await section(
      'c1',
      'the c=1 lane: one request at a time, interleaved rounds, added over direct',
      () => runLane(ctx, laneOpts),
    )
    log('closed loop (throughput, latency) ...')
    const closed = await runClosedMatrix(ctx, fwd)
    log('the bare prototype (key lookup, counter, fetch, pipe) vs direct, same concurrency ...')
    const bare = await runBareProxy(ctx, laneOpts.size.steady)
    log('messages pass-through stream vs direct to the Anthropic mock ...')
    const messages = await runMessagesPassThrough(ctx)
    log(`Responses surface, stream, c${RESPONSES_CONCURRENCY}: direct, translated, pass-through ...`)
    const responses = await runResponses(ctx, fwd)
    const gemini = await section(
      'gemini',
      `Gemini surface, stream, c${GEMINI_CONCURRENCY}: chat, translated, direct, pass-through`,
      () => runGeminiSurface(ctx, fwd),
    )
    log(`embeddings, c${EMBEDDINGS_CONCURRENCY}, base64 and float: direct, pass-through, demo vectors ...`)
    const embeddings = await runEmbeddings(ctx, fwd)
    log(
      `a fallback configured, no fault, c${FALLBACK_CONCURRENCY}: CPU per request vs the same route without ...`,
    )
    const fallback = await runFallback(ctx, fwd)
    const aliases = await section(
      'aliases',
      `an alias and a 1:1 pool, c${ALIASES_CONCURRENCY}: CPU per request vs the model named directly`,
      () => runAliases(ctx, fwd),
    )
    log(`a pool of two keys, c${AFFINITY_CONCURRENCY}: requests carrying a prompt_cache_key vs none ...`)
    const affinity = await runAffinity(ctx, fwd)
    const tokens = await section(
      'tokens',
      `TPM, TPD and a budget, c${TOKENS_CONCURRENCY}: CPU per request vs the same route without`,
      () => runTokens(ctx, fwd, { binary: opts.binary, env }),
    )
    const signals = await section(
      'signals',
      `telemetry and a webhook, c${SIGNALS_CONCURRENCY}: CPU per request vs neither`,
      () => runSignals(ctx, fwd, { binary: opts.binary, env }),
    )
    const agent = await section(
      'agent',
      `agent-like conversations, ${AGENT_CONVERSATIONS} × ${AGENT_TURNS} turns: metered vs plain key`,
      () => runAgent(ctx, plan.repeats, opts.binary),
    )
    const waterfall = await section(
      'waterfall',
      `cost waterfall, c${WATERFALL_CONCURRENCY}: the full path, then one piece off at a time`,
      () => runWaterfall(ctx, opts.binary),
    )
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
    const hostileLoad = await section(
      'hostile',
      'hostile input from one key vs valid traffic of the same size (a gateway of its own)',
      () =>
        runHostileLoad(ws, mocks!, {
          binary: opts.binary,
          env,
          seconds: opts.smoke ? 1 : opts.quick ? 3 : 10,
          log,
        }),
    )
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

    /** A section's rows; none for one left out. */
    const rowsOf = <T>(r: T | null, f: (r: T) => Row[]): Row[] => (r === null ? [] : f(r))
    const rows: Row[] = [
      ...rowsOf(lane, laneRows),
      ...closedRows({ ...closed, ...messages }),
      ...bareRows(bare, closed),
      ...responsesRows(responses),
      ...rowsOf(gemini, geminiRows),
      ...embeddingsRows(embeddings),
      ...fallbackRows(fallback),
      ...rowsOf(aliases, aliasesRows),
      ...affinityRows(affinity),
      ...rowsOf(tokens, tokensRows),
      ...rowsOf(signals, signalsRows),
      ...rowsOf(agent, agentRows),
      ...rowsOf(waterfall, waterfallRows),
      ...openRows(open, plan.openRate),
      ...memoryRows(rssAfterLoad, streams, supervisorRss, rssRightAfter),
      ...microRows(micro),
      ...hostileInputRows(hostile),
      ...rowsOf(hostileLoad, hostileLoadRows),
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
      lane: lane && { ...lane, samples: undefined },
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
