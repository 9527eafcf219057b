/**
 * `serve` runs itself again to give the serving process the environment it reads once at its start
 * (src/cli/process.ts): Bun's fetch cap, and mimalloc's purging of freed memory (`ALLOCATOR_ENV`,
 * stop 60: purged after a second, not 100 ms, so the next request does not fault the freed pages
 * back in). An operator's own value stays.
 */
import { expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir, testConfigDoc } from '../support/config-doc.ts'
import { afterEach } from '../support/hooks.ts'
import { type ServeProcess, spawnServe, writeConfig } from '../support/process.ts'

const serves: ServeProcess[] = []
afterEach(async () => {
  for (const s of serves.splice(0)) await s.kill('SIGKILL')
})

/** The serving process's environment, as it started. */
function environ(pid: number): Record<string, string> {
  const pairs = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean)
  return Object.fromEntries(pairs.map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)]))
}

async function serve(env: Record<string, string> = {}) {
  const dir = tempDir()
  const base = ['--config', writeConfig(dir, testConfigDoc()), '--db', join(dir, 'db.sqlite')]
  const s = await spawnServe(['--port', '0', ...base], { env })
  serves.push(s)
  // Supervised, as an operator starts it (this process's environment has no fetch cap).
  expect(s.pid).not.toBe(s.proc.pid)
  return environ(s.pid)
}

test('the serving process starts with mimalloc purging after a second', async () => {
  const env = await serve()
  expect(env.MIMALLOC_PURGE_DELAY).toBe('1000')
  expect(env.MIMALLOC_PURGE_HOLES_MIN_INTERVAL).toBe('1000')
  expect(env.BUN_CONFIG_MAX_HTTP_REQUESTS).toBe('4096')
})

test("an operator's own allocator setting is kept", async () => {
  const env = await serve({ MIMALLOC_PURGE_DELAY: '250' })
  expect(env.MIMALLOC_PURGE_DELAY).toBe('250')
  expect(env.MIMALLOC_PURGE_HOLES_MIN_INTERVAL).toBe('1000')
})
