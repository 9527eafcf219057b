/** What the config tests share: the problems a load reports, from a document or from YAML text. */
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type Config, ConfigError, type ConfigProblem, loadConfigFile } from '../../src/config/index.ts'
import { tempDir } from '../support/config-doc.ts'

/** The problems `fn` throws as a `ConfigError`; anything else thrown (a crash) fails the test. */
export function problems(fn: () => unknown): ConfigProblem[] {
  try {
    fn()
  } catch (e) {
    if (e instanceof ConfigError) return e.problems
    throw e
  }
  throw new Error('expected a ConfigError')
}

/** The files' folder: made again once removed (after each test file: test/setup.ts). */
let dir = ''
let n = 0

/** Writes `text` to a file and loads it through the real loader (YAML, duplicates, interpolation). */
export async function loadText(
  text: string,
  env: Record<string, string | undefined> = {},
  opts: { secrets?: boolean } = {},
): Promise<Config> {
  if (!dir || !existsSync(dir)) dir = tempDir('switchyard-config-')
  const path = join(dir, `c${n++}.yaml`)
  writeFileSync(path, text)
  return loadConfigFile(path, env, opts)
}

/** The problems loading `text` reports (a crash fails the test). */
export async function textProblems(
  text: string,
  env: Record<string, string | undefined> = {},
  opts: { secrets?: boolean } = {},
): Promise<ConfigProblem[]> {
  try {
    await loadText(text, env, opts)
  } catch (e) {
    if (e instanceof ConfigError) return e.problems
    throw e
  }
  throw new Error('expected a ConfigError')
}

/** A valid file's opening: one demo provider; append `plans:` and `default_plan:`. */
export const DEMO_ONLY = `providers:
  - prefix: demo
    kind: demo
    models:
      - { name: echo, context_window: 10, max_output_tokens: 1024, features: [streaming], tier: free }
`
