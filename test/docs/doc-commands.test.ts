/**
 * .ci/doc-commands.sh and the bench pieces it leans on, where they can be shown in a second: the
 * script stopping early must not signal its process group; a `CADDY` path that is no file is no
 * Caddy (the lane's row skips, saying so).
 */
import { describe, expect, test } from 'bun:test'
import { copyFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { findCaddy } from '../../scripts/bench/caddy.ts'
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
