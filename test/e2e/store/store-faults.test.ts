/**
 * The store's failure modes as an operator meets them: a full disk (a real tmpfs filled to the
 * last byte), a database file deleted or replaced under a running gateway, and the files' mode.
 */
import { describe, expect, test } from 'bun:test'
import { copyFileSync, existsSync, renameSync, rmSync, statfsSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cli } from '../../support/cli.ts'
import { tempDir, testConfigDoc } from '../../support/config-doc.ts'
import { bearer, startGateway, type TestGateway } from '../../support/gateway.ts'
import { afterEach } from '../../support/hooks.ts'
import { type ServeProcess, spawnServe, writeConfig } from '../../support/process.ts'

const gateways: TestGateway[] = []
const cleanups: Array<() => void> = []
afterEach(async () => {
  for (const g of gateways.splice(0)) await g.stop()
  for (const c of cleanups.splice(0)) c()
})

const chat = (url: string, key: string) =>
  fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'hi' }] }),
  })

/** Mounts a small tmpfs (needs root); null where that is not possible. */
function smallDisk(sizeBytes: number): string | null {
  if (process.getuid?.() !== 0) return null
  const dir = tempDir('switchyard-disk-')
  const r = Bun.spawnSync(['mount', '-t', 'tmpfs', '-o', `size=${sizeBytes}`, 'tmpfs', dir])
  if (r.exitCode !== 0) return null
  cleanups.push(() => {
    Bun.spawnSync(['umount', '-l', dir])
    rmSync(dir, { recursive: true, force: true })
  })
  return dir
}

/** Fills the file system holding `dir` until a write fails with ENOSPC. */
function fill(dir: string): string {
  const filler = join(dir, 'filler')
  const s = statfsSync(dir)
  writeFileSync(filler, Buffer.alloc(Math.max(0, s.bavail * s.bsize - 4096)))
  for (let size = 4096; size >= 1; size >>= 1) {
    try {
      for (;;) writeFileSync(filler, Buffer.alloc(size), { flag: 'a' })
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err
    }
  }
  return filler
}

const canMount = smallDisk(1 << 20) !== null
if (!canMount) console.log('SKIPPED: full-disk test (needs root to mount a tmpfs)')

describe('full disk', () => {
  test.skipIf(!canMount)(
    '→ 503 store_unavailable with retry-after and /healthz unhealthy; both recover once space is freed',
    async () => {
      const disk = smallDisk(4 << 20)!
      const gw = await startGateway({ dbPath: join(disk, 'switchyard.db') })
      gateways.push(gw)
      const { key } = await gw.key('full', 'unlimited')
      expect((await chat(gw.url, key)).status).toBe(200)
      await gw.deps.recorder.flush()

      const filler = fill(disk)
      const r = await chat(gw.url, key)
      expect(r.status).toBe(503)
      expect(r.headers.get('retry-after')).toBe('30')
      expect(((await r.json()) as any).error).toMatchObject({ code: 'store_unavailable', type: 'api_error' })
      const h = await fetch(`${gw.url}/healthz`)
      expect(h.status).toBe(503)
      expect(((await h.json()) as any).store.reason).toBe('disk_full')
      expect(gw.logs.some((l) => l.includes('store unavailable'))).toBe(true)

      rmSync(filler)
      expect((await fetch(`${gw.url}/healthz`)).status).toBe(200)
      expect((await chat(gw.url, key)).status).toBe(200)
    },
  )
})

describe('database files', () => {
  test('are created 0600 (database, -wal and -shm)', async () => {
    const gw = await startGateway()
    gateways.push(gw)
    const { key } = await gw.key('perm', 'unlimited')
    expect((await chat(gw.url, key)).status).toBe(200)
    const db = join(gw.dir, 'switchyard.db')
    for (const f of [db, `${db}-wal`, `${db}-shm`]) {
      expect(existsSync(f)).toBe(true)
      expect((statSync(f).mode & 0o777).toString(8)).toBe('600')
    }
  })

  test('deleted while serving → /healthz unhealthy and admissions refused with 503 store_unavailable', async () => {
    const gw = await startGateway()
    gateways.push(gw)
    const { key } = await gw.key('lost', 'unlimited')
    expect((await chat(gw.url, key)).status).toBe(200)
    rmSync(join(gw.dir, 'switchyard.db'))
    const h = await fetch(`${gw.url}/healthz`)
    expect(h.status).toBe(503)
    expect(((await h.json()) as any).store).toMatchObject({ reason: 'file_lost' })
    const r = await chat(gw.url, key)
    expect(r.status).toBe(503)
    expect(((await r.json()) as any).error.code).toBe('store_unavailable')
  })

  /** A serve of its own: the test that starts it stops it (the two run at once; see below). */
  async function serving() {
    const dir = tempDir()
    const db = join(dir, 'sy.db')
    const base = ['--config', writeConfig(dir, testConfigDoc()), '--db', db]
    expect((await cli(['accounts', 'create', 'acct', '--plan', 'unlimited', ...base])).code).toBe(0)
    const key = (await cli(['keys', 'create', 'acct', '--json', ...base])).json().key as string
    const p = await spawnServe(['--port', '0', ...base])
    try {
      expect((await chat(p.url, key)).status).toBe(200)
    } catch (err) {
      await p.kill('SIGKILL')
      throw err
    }
    return { p, db, stderr: () => new Response(p.proc.stderr as ReadableStream).text() }
  }

  async function exitCode(p: ServeProcess, withinMs: number): Promise<number | 'running'> {
    return Promise.race([p.proc.exited, Bun.sleep(withinMs).then(() => 'running' as const)])
  }

  // These two at once, each on a serve, folder and database of its own, stopped by the test
  // itself: the file's afterEach runs as each test ends and would kill the other's serve.
  test.concurrent('deleted while serving → serve exits with code 3 within seconds, saying why', async () => {
    const { p, db, stderr } = await serving()
    try {
      rmSync(db)
      const code = await exitCode(p, 5000)
      // 3, not a crash's 1: a service manager can be told not to restart into an empty database.
      expect(code).toBe(3)
      expect(await stderr()).toContain('was deleted while the gateway was running')
    } finally {
      await p.kill('SIGKILL')
    }
  })

  test.concurrent('replaced while serving → serve exits with code 3 within seconds', async () => {
    const { p, db, stderr } = await serving()
    try {
      copyFileSync(db, `${db}.copy`)
      renameSync(`${db}.copy`, db)
      const code = await exitCode(p, 5000)
      expect(code).toBe(3)
      expect(await stderr()).toContain('was replaced while the gateway was running')
    } finally {
      await p.kill('SIGKILL')
    }
  })
})
