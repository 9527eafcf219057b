/**
 * @module
 * `switchyard init [--path FILE]`: writes the commented starter config (the same file as
 * `switchyard.example.yaml`, embedded in the binary). Never overwrites.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import starter from '../../switchyard.example.yaml' with { type: 'text' }
import { checkFlags, checkPositionals, flagString, type Parsed } from './args.ts'
import { type Io, Output } from './context.ts'

export const STARTER_CONFIG: string = starter

export async function initCommand(p: Parsed, io: Io): Promise<number> {
  checkFlags(p, ['path', 'json', 'help'])
  checkPositionals(p, 1, 'init [--path FILE]')
  const path = resolve(flagString(p, 'path') ?? './switchyard.yaml')
  if (existsSync(path)) {
    io.err(`error: ${path} already exists; init never overwrites. Pass --path FILE to write elsewhere.`)
    return 1
  }
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, STARTER_CONFIG, { flag: 'wx' })
  new Output(io, p.flags.json === true).result(
    { path },
    () =>
      `wrote ${path}\nnext: switchyard accounts create alice --plan free --config ${path}\n` +
      `      switchyard keys create alice --config ${path}\n      switchyard serve --config ${path}`,
  )
  return 0
}
