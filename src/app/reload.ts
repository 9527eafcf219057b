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
 */
import { type Config, ConfigError, type ConfigProblem } from '../config/index.ts'
import type { ReloadReport } from '../server/deps.ts'
import type { Logger } from '../util/log.ts'
import { configChanges, restartProblems } from './config-changes.ts'

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
