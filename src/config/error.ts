/**
 * @module
 * The config's error: its own module, with nothing to load, so the command line can tell a config
 * error from another failure without loading the schemas (a command that never reads the config,
 * `--version`, starts without them).
 */

export interface ConfigProblem {
  path: string
  message: string
}

export class ConfigError extends Error {
  readonly problems: ConfigProblem[]
  constructor(source: string, problems: ConfigProblem[]) {
    super(
      `invalid config ${source}:\n${problems.map((p) => `  ${p.path}: ${p.message}`).join('\n')}\n` +
        'Fix the listed paths and run `switchyard config check` again.',
    )
    this.name = 'ConfigError'
    this.problems = problems
  }
}
