/**
 * @module
 * The serving half of `serve` (serve.ts): the process that listens — the primary or a worker —
 * after its flags and config are read and the supervisor, if any, has started it.
 */

import { buildDeps } from '../app/build.ts'
import { type Running, startServer } from '../app/serve.ts'
import type { Config } from '../config/index.ts'
import { type Deps, type ReloadReport, reloadAuditChange } from '../server/deps.ts'
import { consoleNote } from '../server/routes/console-off.ts'
import { describeDatabase } from '../store/index.ts'
import { audit } from '../util/audit.ts'
import { createLogger, type Logger } from '../util/log.ts'
import { VERSION } from '../version.ts'
import { flagInt, flagString, type Parsed } from './args.ts'
import { configPath, loadConfig } from './context.ts'
import { openDatabase } from './database.ts'
import { CliError } from './errors.ts'
import type { Io } from './io.ts'
import { exitWithParent } from './process.ts'
import {
  findServeFile,
  newServeToken,
  pruneServeFiles,
  publishServeFile,
  reachable,
  servePlaces,
} from './serve-file.ts'
import { forceExit, onStopSignals } from './signals.ts'
import { joinPool, type PeerReload, WorkerPool } from './workers.ts'

/** What serve.ts read before handing over: the config with the flags applied, and the flags. */
export interface ServeStart {
  config: Config
  host: string | undefined
  /** Where the host came from (`--host`, `env HOST`, `server.host in FILE`): a listen failure names it. */
  hostFrom: string
  port: number | undefined
  workersFlag: number | undefined
  workers: number
  /** Started by the primary as one of `--workers N`. */
  child: boolean
}

export async function serveHere(p: Parsed, io: Io, start: ServeStart): Promise<number> {
  const { config, host, port, workersFlag, workers, child } = start
  // Started by the supervisor, or as a worker: stop when the process that started us does —
  // at once while starting, gracefully (`stop` below) once serving.
  const started = io.env.SWITCHYARD_SUPERVISED === '1' || child
  let parentGone: () => void = () => process.exit(0)
  if (started) exitWithParent(() => parentGone())

  const log = createLogger(config.logging.level)
  /** The file again for a live reload, with this command's flags and environment applied as at start. */
  const load = async (): Promise<Config> => {
    const next = await loadConfig(p, io)
    if (host) next.server.host = host
    if (port !== undefined) next.server.port = port
    // `--workers` wins over the file's, as at start: the file's then changes nothing.
    if (workersFlag !== undefined) next.server.workers = config.server.workers
    return next
  }
  const store = await openDatabase(config, {
    warn: (m, f) => log.warn(m, f),
    error: (m, f) => log.error(m, f),
    checkpointInThread: true,
  })
  const deps = buildDeps(config, { store, log })
  let running: Running
  try {
    // A database file deleted or replaced under a running gateway: exit non-zero so the service
    // manager notices, rather than keep serving from a file no other process can see.
    running = startServer(config, deps, workers > 1 || child, {
      onFatal: (detail) => {
        io.err(`switchyard: ${detail}; exiting`)
        process.exit(3)
      },
      load,
      // A worker listens where its primary does; its config keeps the port as the file and flags say it.
      listenPort: flagInt(p, 'worker-port', 1, 65535),
    })
  } catch (err) {
    await store.close()
    const { host, port } = config.server
    throw new CliError(
      'listen_failed',
      `cannot listen on ${host}:${port}: ${listenProblem(err, port, start.hostFrom)}`,
    )
  }
  const info = {
    url: running.url,
    port: running.port,
    pid: process.pid,
    workers,
    database: describeDatabase(config),
    console: config.admin.token === null ? null : `${running.url}/console`,
  }
  let pool: WorkerPool | null = null
  let stopping = false
  let forced = false
  const stop = async (code: number) => {
    if (stopping) return
    stopping = true
    pool?.stop('SIGTERM')
    await running.drain()
    await pool?.exited()
    // The workers a forced stop killed have exited too: forceExit exits, with the signal's status.
    if (!forced) process.exit(code)
  }
  parentGone = () => {
    // The process above exits only after this one has drained (the primary waits for its pool,
    // the supervisor for the primary): gone during the drain, it was killed — a forced stop
    // (signals.ts) or kill -9. So this one stops at once too, cutting what it still serves,
    // rather than serve on for up to drain_timeout_s after the stop the operator forced.
    if (stopping) {
      deps.log.warn('the process that started this one was killed during the drain; stopping at once', {
        pid: process.pid,
        parent: child ? 'primary' : 'supervisor',
      })
      process.exit(1)
    }
    deps.log.error('the process that started this one has exited; stopping as on SIGTERM', {
      pid: process.pid,
      parent: child ? 'primary' : 'supervisor',
    })
    void stop(0)
  }
  // Before the start line: a signal that follows it at once is a graceful stop (drained, its
  // log lines written), never the default death the process had until its handlers were in.
  // A second signal forces the stop only in the process the operator started: one started by the
  // supervisor or the primary is ended by it (`signals.ts`).
  onStopSignals({
    graceful: () => void stop(0),
    forced: started
      ? undefined
      : (signal) => {
          forced = true
          void forceExit(deps.log, signal, async () => {
            pool?.stop('SIGKILL')
            await pool?.exited()
          })
        },
  })
  // Live reload: this process's own, widened to every process of `--workers N` (the admin route on
  // any of them, SIGHUP to the primary); a SIGHUP sent to one worker reloads that worker only.
  const own = async () => {
    const r = await running.reload()
    // As at start: accounts left on a plan the file no longer has are named (the primary's log only).
    if (!child && r.changed.entries.plans?.removed.length) {
      await warnOrphanPlans(running.deps, running.deps.config).catch((err) =>
        log.warn('accounts on removed plans not checked', { error: (err as Error).message }),
      )
    }
    return r
  }
  // The reload's webhook is sent where it was asked, once, with the others' outcomes.
  const announced = (run: () => Promise<ReloadReport>) => async () => {
    const r = await run()
    running.announce(r)
    return r
  }
  const everywhere = (others: () => Promise<PeerReload[]>) =>
    announced(async () => {
      const r = await own()
      return r.outcome === 'refused' ? r : { ...r, others: await others() }
    })
  // The serve file (`switchyard reload`'s way in): written by the primary before its workers
  // start, read by them (its credential is the primary's, whichever process the CLI reaches).
  const places = servePlaces(config, configPath(p, io), io.env)
  if (child) {
    deps.reloads.token = findServeFile(places, process.ppid)?.token ?? null
    deps.reloads.run = everywhere(joinPool(deps.metrics, own).reloadOthers)
    process.on('SIGHUP', () => void reloadBySignal(announced(own), deps.log))
    io.out(JSON.stringify(info))
  } else {
    await warnOrphanPlans(deps, config)
    deps.reloads.token = newServeToken()
    try {
      // Those a `kill -9` left: `reload` would ask them, and a gateway now on their port would count a failed login.
      pruneServeFiles(places)
      const written = publishServeFile(places, {
        pid: process.pid,
        url: `http://${reachable(config.server.host)}:${running.port}`,
        token: deps.reloads.token,
      })
      process.on('exit', written.remove)
      if (written.passed.length) {
        deps.log.info(
          "the serve file is in this user's runtime folder: the folder beside it cannot be written",
          {
            path: written.path,
            beside: written.passed[0],
          },
        )
      }
    } catch (err) {
      // Serving goes on: SIGHUP and the admin token still reload it.
      deps.log.warn(
        'the serve file could not be written: switchyard reload cannot find this gateway; SIGHUP reloads it (kill -HUP PID, systemctl reload)',
        { tried: places.map((place) => place.dir), error: (err as Error).message },
      )
    }
    // A worker that keeps dying as soon as it starts: drain the rest and exit 1.
    const workerPool = new WorkerPool(deps.metrics, {
      log: deps.log,
      onGiveUp: () => void stop(1),
      reload: own,
    })
    pool = workerPool
    deps.reloads.run = everywhere(() => workerPool.reloadAll())
    process.on('SIGHUP', () => void reloadBySignal(deps.reloads.run, deps.log))
    try {
      // Announce only once every worker is listening.
      await workerPool.start(workers - 1, workerArgs(p, running.port))
    } catch (err) {
      workerPool.stop('SIGKILL')
      await running.stop()
      throw err
    }
    const plural = workers > 1 ? 's' : ''
    // The start as a log line too: the collector that keeps the shutdown lines sees where it served.
    deps.log.info('listening', {
      url: info.url,
      workers,
      database: info.database,
      console: info.console,
      pid: info.pid,
      version: VERSION,
    })
    io.out(
      p.flags.json === true
        ? JSON.stringify(info)
        : `Switchyard listening on ${running.url} (${workers} worker${plural}, database ${describeDatabase(config)}; ${consoleNote(config.admin.token, running.url)})`,
    )
  }
  await new Promise(() => {})
  return 0
}

/** SIGHUP: a live reload, audited as the admin route's is (the actor is the signal). */
async function reloadBySignal(run: () => Promise<ReloadReport>, log: Logger): Promise<void> {
  const r = await run()
  audit(log, {
    actor: 'signal',
    action: 'SIGHUP',
    target: r.source,
    change: reloadAuditChange(r),
    outcome: r.outcome !== 'refused' ? 'ok' : r.restart ? 'restart_required' : 'config_invalid',
  })
}

/** Why the socket could not be opened, and what to change: Bun's own words name no setting. */
function listenProblem(err: unknown, port: number, hostFrom: string): string {
  const code = String((err as { code?: unknown })?.code ?? '')
  const said = (err as Error)?.message ?? String(err)
  if (code === 'EADDRINUSE') {
    return `port ${port} is in use by another process: stop it, or choose another port (--port, env PORT or server.port; 0 = any free port)`
  }
  if (code === 'EACCES' || code === 'EPERM') {
    return `${said}; this user may not listen on port ${port} (ports below 1024 need privileges): choose a port from 1024 up (--port, env PORT or server.port)`
  }
  if (/^(EADDRNOTAVAIL|EINVAL|ENOTFOUND|EAI_)/.test(code)) {
    return `${said}; ${hostFrom} is not an address of this machine: give it one of its IP addresses, 127.0.0.1 for this machine only or 0.0.0.0 for every interface`
  }
  return said
}

/**
 * A worker's command line: the port to listen on (`--worker-port`, the one this process chose),
 * and this command's flags as given — `--port` only when it had one (the worker inherits `PORT`),
 * so the worker's reloads apply the file's `server.port` as this process's do.
 */
function workerArgs(p: Parsed, port: number): string[] {
  const args = ['serve', '--worker-child', '--worker-port', String(port)]
  for (const f of ['config', 'db', 'host', 'port']) {
    const v = flagString(p, f)
    if (v) args.push(`--${f}`, v)
  }
  return args
}

/**
 * A plan removed from the config while accounts are still on it: those accounts get 403
 * plan_not_configured, after their plan's end too (a removed plan has no `on_expiry` to apply),
 * until an operator acts. The warning names them and the two ways out.
 */
async function warnOrphanPlans(deps: Deps, config: Config): Promise<void> {
  const byPlan = new Map<string, string[]>()
  for (const a of await deps.store.listAccounts()) {
    if (config.plans[a.plan]) continue
    byPlan.set(a.plan, [...(byPlan.get(a.plan) ?? []), a.name])
  }
  for (const [plan, accounts] of byPlan) {
    deps.log.warn(
      `accounts on plan '${plan}', which is not in the config, are refused (403 plan_not_configured), ` +
        "after their plan's end too, until the plan is back or they are moved",
      {
        plan,
        accounts,
        fix: `add plan '${plan}' back to the config, or move each account: switchyard accounts set-plan NAME PLAN`,
      },
    )
  }
}
