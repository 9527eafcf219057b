/**
 * Issue 47: the replicas page's commands, as pasted — `createdb`, `migrate`, an account and a key,
 * two `serve` replicas on one PostgreSQL and one Redis (the page's config block, its hosts swapped
 * for the test process's shared engines' and the replicas' ports for free ones), each answering the key, and a key
 * disabled on the command line refused by both (403 `key_disabled`), as the block's last line says.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { quotePlaceholders } from '../../../src/config/yaml.ts'
import { REPO } from '../../support/cli.ts'
import { blockAfter, commandLines, serveAsPasted, switchyardBinary } from '../../support/docs.ts'
import { engines, skipWithout } from '../../support/engines.ts'
import {
  type SharedPostgres,
  type SharedRedis,
  sharedPostgres,
  sharedRedis,
} from '../../support/shared-engines.ts'

const skip = skipWithout(
  ['postgres', 'redis'],
  'docs-replicas.test.ts (the replicas page on PostgreSQL and Redis)',
)

const asBinary = await switchyardBinary()
let pg: SharedPostgres
let redis: SharedRedis
let dir: string
let env: Record<string, string>

/** The commands of the page's first ```sh block after `anchor`. */
const shBlock = (anchor: string) => commandLines(blockAfter(anchor, 'sh', ['docs/replicas.md']).text)

/** One command line through `sh`, in the config's folder, with the PostgreSQL client's settings. */
async function sh(line: string) {
  const proc = Bun.spawn(['sh', '-c', line], {
    cwd: dir,
    env,
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ])
  if (code !== 0) console.log(`${line} exited ${code}\n${stdout}\n${stderr}`)
  return { code, stdout }
}

/** The page's database, on the process's shared server (support/shared-engines.ts). */
async function dropPageDatabase() {
  const admin = new Bun.SQL(`postgres://postgres@127.0.0.1:${pg.port}/postgres`, { max: 1 })
  try {
    // FORCE: a replica that failed to stop still holds connections. A fixed name, no input.
    await admin.unsafe('DROP DATABASE IF EXISTS switchyard WITH (FORCE)')
  } finally {
    await admin.close()
  }
}

beforeAll(async () => {
  // The process's engines, shared with the files before and after this one (nothing here stops,
  // pauses or restarts one): the page's `createdb switchyard` makes its own database on it, dropped
  // when the file ends, and the key state the replicas keep in Redis is emptied before and after.
  if (skip) return
  ;[pg, redis] = await Promise.all([sharedPostgres(), sharedRedis()])
  await Promise.all([dropPageDatabase(), redis.flush()])
  dir = mkdtempSync(join(tmpdir(), 'switchyard-docs-replicas-'))
  const pgBin = engines.postgres.ok ? engines.postgres.bin : ''
  env = {
    PATH: `${pgBin}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    HOME: dir,
    PGHOST: '127.0.0.1',
    PGPORT: String(pg.port),
    PGUSER: 'postgres',
  }
  // The starter config with the page's `database` and `limits` block, on the engines started here.
  const block = blockAfter('# Several replicas', 'yaml', ['docs/replicas.md'])
    .text.replace('switchyard:${PGPASSWORD}@db.internal:5432', `postgres@127.0.0.1:${pg.port}`)
    .replace('redis://cache.internal:6379/0', redis.url)
  const page = Bun.YAML.parse(block) as { database: object; limits: object }
  const starter = Bun.YAML.parse(
    quotePlaceholders(await Bun.file(join(REPO, 'switchyard.example.yaml')).text()),
  ) as Record<string, unknown>
  const doc = {
    ...starter,
    database: page.database,
    limits: { ...(starter.limits as object), ...page.limits },
  }
  writeFileSync(join(dir, 'switchyard.yaml'), JSON.stringify(doc, null, 2))
}, 60_000)

afterAll(async () => {
  if (skip) return
  await Promise.all([dropPageDatabase(), redis.flush()])
  await pg.release()
  rmSync(dir, { recursive: true, force: true })
})

describe.skipIf(skip)('the replicas page, as pasted', () => {
  test('createdb, migrate, a key, two replicas answering it; disabled on one command line, refused by both', async () => {
    const lines = shBlock('Two replicas on one PostgreSQL')
    expect(lines).toHaveLength(6)
    const [createdb, migrate, account, key, ...serves] = lines as [
      string,
      string,
      string,
      string,
      ...string[],
    ]
    expect(createdb).toBe('createdb switchyard')
    expect((await sh(createdb)).code).toBe(0)
    for (const line of [migrate, account]) expect((await sh(asBinary(line))).code).toBe(0)
    const made = await sh(asBinary(key))
    expect(made.code).toBe(0)
    const secret = /^sk-sy-\S+$/m.exec(made.stdout)![0]
    const id = /\bkey_\w+/.exec(made.stdout)![0]

    // `&` puts each in the background of the shell that pasted them; here each is a job of its own.
    expect(serves.every((s) => / --port 808\d &$/.test(s))).toBe(true)
    const replicas = await Promise.all(
      serves.map((s) => serveAsPasted(asBinary(s.replace(/ --port 808\d &$/, ' --port 0')), dir, env)),
    )
    try {
      for (const r of replicas) {
        const res = await fetch(`${r.url}/v1/usage`, { headers: { authorization: `Bearer ${secret}` } })
        expect(res.status).toBe(200)
        await res.text()
      }
      expect((await sh(asBinary(`switchyard keys disable ${id} --config switchyard.yaml`))).code).toBe(0)
      // The page's bound is 250 ms: a replica's cached key is read again once that much wall-clock
      // time has passed, however loaded the machine. One request each (the `free` plan allows 5 a
      // minute, and a refused request here is not the key's doing).
      await Bun.sleep(300)
      for (const r of replicas) {
        const res = await fetch(`${r.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'hi' }] }),
        })
        expect(res.status).toBe(403)
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe('key_disabled')
      }
    } finally {
      await Promise.all(replicas.map((r) => r.stop()))
    }
  }, 120_000)
})
