/**
 * .ci/doc-commands.sh and the bench pieces it leans on, where they can be shown in a second: the
 * script stopping early must not signal its process group; a `CADDY` path that is no file is no
 * Caddy (the lane's row skips, saying so); under the smoke, `--quick` and `--binary` run only what
 * they change, the plain line every section but those the other lines CI runs name by their flag.
 */
import { describe, expect, test } from 'bun:test'
import { copyFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { alonePart } from '../../scripts/bench/alone.ts'
import { findCaddy } from '../../scripts/bench/caddy.ts'
import { parseArgs, SMOKE_ALONE_ENV, SMOKE_ENV } from '../../scripts/bench/options.ts'
import { REPO } from '../support/cli.ts'
import { tempDir } from '../support/config-doc.ts'

describe('.ci/doc-commands.sh', () => {
  test('stopping before the server starts signals no process group (its EXIT trap kills only what it started)', async () => {
    // Outside a git checkout `git ls-files` fails at once, before `bun run start` is started.
    const dir = tempDir()
    mkdirSync(join(dir, '.ci'))
    copyFileSync(join(REPO, '.ci/doc-commands.sh'), join(dir, '.ci/doc-commands.sh'))
    // A group of its own (setsid), so that `kill -- -0` on main reaches the script alone.
    const proc = Bun.spawn(['bash', join(dir, '.ci/doc-commands.sh')], {
      detached: true,
      stdout: 'pipe',
      stderr: 'pipe',
      env: { ...process.env, GIT_CEILING_DIRECTORIES: dir },
    })
    await proc.exited
    expect(proc.signalCode).toBeNull()
    expect(proc.exitCode).not.toBe(0)
  })
})

describe('findCaddy', () => {
  test('a CADDY path that is no file is no Caddy (null: the row skips), an existing one is used', () => {
    const was = process.env.CADDY
    try {
      process.env.CADDY = join(tempDir(), 'usr/bin/caddy')
      expect(findCaddy()).toBeNull()
      process.env.CADDY = '/bin/sh'
      expect(findCaddy()).toBe('/bin/sh')
    } finally {
      if (was === undefined) delete process.env.CADDY
      else process.env.CADDY = was
    }
  })
})

describe('the bench smoke (SWITCHYARD_BENCH_SMOKE=1, as CI runs every bench line)', () => {
  /** `bun run bench ARGS`'s options with the smoke on or off, and SMOKE_ALONE_ENV set to `lines`. */
  function optionsOf(args: string[], smoke: boolean, lines?: string) {
    const was = [process.env[SMOKE_ENV], process.env[SMOKE_ALONE_ENV]]
    try {
      process.env[SMOKE_ENV] = smoke ? '1' : '0'
      if (lines === undefined) delete process.env[SMOKE_ALONE_ENV]
      else process.env[SMOKE_ALONE_ENV] = lines
      return parseArgs(args)
    } finally {
      ;[SMOKE_ENV, SMOKE_ALONE_ENV].forEach((name, i) => {
        if (was[i] === undefined) delete process.env[name]
        else process.env[name] = was[i]
      })
    }
  }
  /** The part `bun run bench ARGS` runs alone (null: every section), with the smoke on or off. */
  const partOf = (args: string[], smoke: boolean) => alonePart(optionsOf(args, smoke))?.kind ?? null

  test('--quick and --binary run their own part, not every section again; the plain line runs every section', () => {
    expect(partOf(['--quick'], true)).toBe('smoke-quick')
    expect(partOf(['--binary'], true)).toBe('smoke-binary')
    expect(partOf(['--quick', '--binary'], true)).toBe('smoke-quick')
    expect(partOf([], true)).toBeNull()
    // A section flag keeps its section; off the smoke, --quick and --binary are whole runs.
    expect(partOf(['--quick', '--gemini'], true)).toBe('gemini')
    expect(partOf(['--quick'], false)).toBeNull()
    expect(partOf(['--binary'], false)).toBeNull()
  })

  test('the plain line leaves out the sections the other lines name by their flag (as doc-commands.sh exports them), only under the smoke', () => {
    const lines = ['', ' --quick', ' --soak 10', ' --waterfall', ' --c1', ' --gemini'].map(
      (a) => `bun run bench${a}`,
    )
    expect(optionsOf([], true, lines.join(' ')).smokeAlone).toEqual(['c1', 'waterfall', 'gemini'])
    // Without the variable, or off the smoke, the plain line runs every section.
    expect(optionsOf([], true).smokeAlone).toEqual([])
    expect(optionsOf([], false, lines.join(' ')).smokeAlone).toEqual([])
    // A section line still runs its own section.
    expect(alonePart(optionsOf(['--c1'], true, lines.join(' ')))?.kind).toBe('c1')
  })
})
