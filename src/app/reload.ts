/**
 * @module
 * Live reload (DESIGN §13): the config file is read and validated again; a file with problems is
 * refused with every one of them (the words `config check` and start-up use) and the running
 * config stays; a start-only setting that changed refuses it too (app/config-changes.ts); a valid
 * file becomes the next generation, which `startServer` swaps in with one assignment. A request
 * runs wholly on the generation current when it arrived (its app and every part built from the
 * config), so requests and streams in flight finish on the config they started with.
 *
 * Reloads run one at a time, in the order asked: two at once never race to swap.
 *
 * The webhooks (`reloadAlert`) are sent by the process that was asked (`startServer`'s
 * `announce`), once per reload: with `--workers N` the others' outcomes are in its data.
 */
import { type AlertEvent, type Config, ConfigError, type ConfigProblem } from '../config/index.ts'
import type { ReloadReport } from '../server/deps.ts'
import type { Logger } from '../util/log.ts'
import { changedPaths, configChanges, restartProblems } from './config-changes.ts'

export interface ReloaderOptions {
  /** Reads and validates the file again (throws `ConfigError` with every problem). */
  load: () => Promise<Config>
  /** The running generation's config. */
  current: () => Config
  /** Swaps `next` in: every request that arrives after it returns runs on it. */
  apply: (next: Config) => void
  /** The logger (it outlives reloads: `logging` is start-only). */
  log: Logger
}

export class Reloader {
  /** The configs served so far, counting the first. */
  generation = 1
  private last: Promise<unknown> = Promise.resolve()

  constructor(private readonly opts: ReloaderOptions) {}

  run(): Promise<ReloadReport> {
    const report = this.last.then(() => this.once())
    this.last = report.catch(() => {})
    return report
  }

  private async once(): Promise<ReloadReport> {
    const running = this.opts.current()
    const log = this.opts.log
    const base = {
      generation: this.generation,
      changed: { sections: [], entries: {} },
      problems: [],
      restart: false,
      source: running.source,
    }
    let next: Config
    try {
      next = await this.opts.load()
    } catch (err) {
      const problems: ConfigProblem[] =
        err instanceof ConfigError ? err.problems : [{ path: '/', message: (err as Error).message }]
      log.warn('config reload refused: the file has problems; the running config stays', {
        source: running.source,
        problems,
        pid: process.pid,
      })
      return { ...base, outcome: 'refused', problems }
    }
    const restart = restartProblems(running, next)
    if (restart.length) {
      log.warn('config reload refused: a setting that needs a restart changed; the running config stays', {
        source: running.source,
        problems: restart,
        pid: process.pid,
      })
      return { ...base, outcome: 'refused', problems: restart, restart: true }
    }
    const changed = configChanges(running, next)
    if (!changed.sections.length) {
      log.info('config reload: the file is unchanged', { source: running.source, pid: process.pid })
      return { ...base, outcome: 'unchanged' }
    }
    this.opts.apply(next)
    this.generation++
    log.info('config reloaded', {
      source: running.source,
      generation: this.generation,
      sections: changed.sections,
      ...changed.entries,
      pid: process.pid,
    })
    return { ...base, generation: this.generation, outcome: 'applied', changed }
  }
}

/**
 * The webhook a reload's outcome sends (DESIGN §15), or none (`unchanged`: nothing was applied).
 * `reload.applied` carries what changed, by the file's paths; `reload.refused` why — the paths of
 * the file's problems (`config_invalid`) or of the start-only settings it changed
 * (`restart_required`), never a value or a message that could quote one.
 */
export function reloadAlert(r: ReloadReport): { event: AlertEvent; data: Record<string, unknown> } | null {
  if (r.outcome === 'unchanged') return null
  const common = {
    source: r.source,
    generation: r.generation,
    ...(r.others?.length ? { others: r.others } : {}),
  }
  if (r.outcome === 'applied')
    return { event: 'reload.applied', data: { ...common, changed: changedPaths(r.changed) } }
  return {
    event: 'reload.refused',
    data: {
      ...common,
      reason: r.restart ? 'restart_required' : 'config_invalid',
      problems: r.problems.map((p) => p.path),
    },
  }
}
