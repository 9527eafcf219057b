/**
 * The serve file's place and its write: beside the SQLite database (beside the config file with
 * PostgreSQL, whose config has no `database.path`), and created new, never written through a file
 * or link put in its way. Where that folder cannot be written (the documented unit's read-only
 * /etc), in a runtime folder of this user's — never a link, nor a folder another user owns or can
 * enter — which `switchyard reload` searches too (stop 65: `serve` wrote none there, and `reload`
 * found no gateway).
 */
import { afterAll, expect, test } from 'bun:test'
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { dirname, join } from 'node:path'
import {
  findServeFile,
  pruneServeFiles,
  publishServeFile,
  readServeFile,
  type ServePlace,
  servePath,
  servePlaces,
  writeServeFile,
} from '../../src/cli/serve-file.ts'
import type { Config } from '../../src/config/index.ts'
import { cli } from '../support/cli.ts'
import { tempDir, testConfigDoc } from '../support/config-doc.ts'
import { spawnServe, UNSUPERVISED, writeConfig } from '../support/process.ts'

const dir = tempDir()
afterAll(() => {
  chmodSync(dir, 0o755)
  for (const d of readdirSync(dir)) chmodSync(join(dir, d), 0o755)
  rmSync(dir, { recursive: true, force: true })
})

const config = (database: { path: string; url: string | null }) => ({ database }) as unknown as Config
const pg = config({ path: './data/switchyard.db', url: 'postgres://db.internal/switchyard' })
const uid = process.getuid!()
const FILE = { pid: 4242, url: 'http://127.0.0.1:9', token: 'secret-token' }

test('beside the SQLite database; beside the config file with PostgreSQL (no database.path) and :memory:; then the runtime folders', () => {
  const sqlite = config({ path: '/var/lib/switchyard/switchyard.db', url: null })
  const [beside] = servePlaces(sqlite, '/etc/switchyard/switchyard.yaml', {})
  expect(servePath(beside!, 42)).toBe('/var/lib/switchyard/switchyard.db.42.serving')
  expect(servePath(servePlaces(pg, '/srv/sw/switchyard.yaml', {})[0]!, 42)).toBe(
    '/srv/sw/switchyard.yaml.42.serving',
  )
  const memory = config({ path: ':memory:', url: null })
  expect(servePath(servePlaces(memory, '/srv/sw/switchyard.yaml', {})[0]!, 7)).toBe(
    '/srv/sw/switchyard.yaml.7.serving',
  )
  // The runtime folders: $XDG_RUNTIME_DIR's when set, then the temp dir's, the name a hash of the path.
  const places = servePlaces(pg, '/etc/switchyard/switchyard.yaml', {
    XDG_RUNTIME_DIR: '/run/user/7',
    TMPDIR: '/t',
  })
  expect(places.map((p) => p.dir)).toEqual([
    '/etc/switchyard',
    '/run/user/7/switchyard',
    `/t/switchyard-${uid}`,
  ])
  expect(places[1]!.name).toMatch(/^switchyard\.yaml-[0-9a-f]{16}$/)
  expect(places[2]!.name).toBe(places[1]!.name)
  // Another config's name differs: one runtime folder holds every config's files.
  expect(servePlaces(pg, '/etc/other/switchyard.yaml', { TMPDIR: '/t' })[1]!.name).not.toBe(places[1]!.name)
})

test("a link planted at the temporary name is not written through: the credential stays in the serve file's own 0600 file", () => {
  const path = join(dir, 'data', 'switchyard.db.4242.serving')
  const bait = join(dir, 'bait')
  writeFileSync(bait, '')
  // Planted where the temporary file would go.
  mkdirSync(join(dir, 'data'))
  symlinkSync(bait, `${path}.${process.pid}.tmp`)
  writeServeFile(path, FILE)
  expect(readFileSync(bait, 'utf8')).toBe('')
  expect(lstatSync(path).isSymbolicLink()).toBe(false)
  expect(statSync(path).mode & 0o777).toBe(0o600)
  expect(readServeFile(path)?.token).toBe('secret-token')
  expect(existsSync(`${path}.${process.pid}.tmp`)).toBe(false)
})

/** A config whose folder cannot be written (a path under a file), runtime folders under `temp`. */
function unwritable(temp: string): ServePlace[] {
  writeFileSync(join(dir, 'a-file'), '')
  return servePlaces(pg, join(dir, 'a-file', 'switchyard.yaml'), { TMPDIR: temp })
}

test('the folder beside cannot be written: the runtime folder, made 0700; a worker and reload find it there', () => {
  const temp = join(dir, 'tmp-ok')
  mkdirSync(temp)
  const places = unwritable(temp)
  const written = publishServeFile(places, FILE)
  expect(written.path).toBe(servePath(places[1]!, 4242))
  expect(written.passed).toHaveLength(1)
  expect(written.passed[0]).toContain(join(dir, 'a-file'))
  expect(statSync(places[1]!.dir).mode & 0o777).toBe(0o700)
  expect(statSync(written.path).mode & 0o777).toBe(0o600)
  expect(findServeFile(places, 4242)?.token).toBe('secret-token')
  // pid 4242 runs no gateway here: reload's search finds the file, and removes it.
  expect(pruneServeFiles(places).removed).toEqual([written.path])
})

test('never a runtime folder that is a link, another user owns, others may enter or rename, or in a folder another user owns: the file is written nowhere', () => {
  const cases: Array<[string, (folder: string) => void, string]> = [
    ['tmp-link', (f) => symlinkSync(join(dir, 'data'), f), 'is a link'],
    [
      'tmp-other',
      (f) => {
        mkdirSync(f, { mode: 0o700 })
        chownSync(f, 65534, 65534)
      },
      'belongs to another user',
    ],
    [
      'tmp-open',
      (f) => {
        mkdirSync(f)
        chmodSync(f, 0o777)
      },
      'open to other users',
    ],
    [
      // Ours, in a folder where another user may rename it away and put theirs in its place.
      'tmp-unsticky',
      (f) => {
        mkdirSync(f, { mode: 0o700 })
        chownSync(dirname(f), 65534, 65534)
        chmodSync(dirname(f), 0o777)
      },
      'may rename what is in it',
    ],
    [
      // Ours, in a folder another user owns, shut to everyone else (0755): its owner may rename.
      'tmp-other-parent',
      (f) => {
        mkdirSync(f, { mode: 0o700 })
        chownSync(dirname(f), 65534, 65534)
        chmodSync(dirname(f), 0o755)
      },
      "another user's (uid 65534)",
    ],
  ]
  for (const [name, plant, said] of cases) {
    const temp = join(dir, name)
    mkdirSync(temp)
    const places = unwritable(temp)
    plant(places[1]!.dir)
    // A serve file someone put there first is not taken for a gateway's.
    if (name !== 'tmp-link')
      writeFileSync(servePath(places[1]!, process.pid), JSON.stringify({ ...FILE, pid: process.pid }))
    expect(() => publishServeFile(places, FILE)).toThrow(said)
    expect(existsSync(servePath(places[1]!, 4242))).toBe(false)
    expect(findServeFile(places, process.pid)).toBeNull()
    expect(pruneServeFiles(places).found).toEqual([])
  }
})

/**
 * As root (the tests' user) a chmod stops no write: the serving process runs without the
 * capability that lets root write where the mode forbids (CAP_DAC_OVERRIDE), as any other user.
 */
const noOverride = uid === 0 ? ['setpriv', '--bounding-set=-dac_override,-dac_read_search', '--'] : []

test('serve with its config in a read-only folder (PostgreSQL or :memory:): the serve file in the runtime folder, said once; switchyard reload reaches it', async () => {
  const etc = join(dir, 'etc')
  mkdirSync(etc)
  const file = writeConfig(etc, testConfigDoc({ database: { path: ':memory:' } }))
  chmodSync(etc, 0o555)
  const temp = join(dir, 'tmp-serve')
  mkdirSync(temp)
  // No $XDG_RUNTIME_DIR (a desktop session's would come first): the temp dir's folder.
  const env = { TMPDIR: temp, XDG_RUNTIME_DIR: '' }
  const serve = await spawnServe(['--port', '0', '--config', file], {
    env: { ...UNSUPERVISED, ...env },
    wrap: noOverride,
  })
  let stopped = false
  try {
    const runtime = join(temp, `switchyard-${uid}`)
    const [name] = readdirSync(runtime)
    expect(name).toMatch(new RegExp(`^switchyard\\.yaml-[0-9a-f]{16}\\.${serve.pid}\\.serving$`))
    expect(readdirSync(etc)).toEqual(['switchyard.yaml'])
    const r = await cli(['reload', '--config', file, '--json'], env)
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(r.json()).toMatchObject({ outcome: 'unchanged' })
    expect(await serve.kill('SIGTERM')).toBe(0)
    stopped = true
    expect(readdirSync(runtime)).toEqual([])
    const lines = (await new Response(serve.proc.stderr as ReadableStream).text()).split('\n').filter(Boolean)
    const said = lines.filter((l) => l.includes('serve file')).map((l) => JSON.parse(l))
    expect(said).toHaveLength(1)
    expect(said[0]).toMatchObject({ level: 'info', path: join(runtime, name!) })
    expect(said[0].msg).toContain('runtime folder')
  } finally {
    if (!stopped) await serve.kill('SIGKILL')
  }
}, 30_000)

test('nowhere to write it (the temp dir unusable too): serve still starts, and says so once, with the way to reload', async () => {
  const etc = join(dir, 'etc-none')
  mkdirSync(etc)
  const file = writeConfig(etc, testConfigDoc({ database: { path: ':memory:' } }))
  chmodSync(etc, 0o555)
  const serve = await spawnServe(['--port', '0', '--config', file], {
    env: { ...UNSUPERVISED, TMPDIR: join(dir, 'a-file'), XDG_RUNTIME_DIR: '' },
    wrap: noOverride,
  })
  expect((await fetch(`${serve.url}/healthz`)).status).toBe(200)
  expect(await serve.kill('SIGTERM')).toBe(0)
  const lines = (await new Response(serve.proc.stderr as ReadableStream).text()).split('\n').filter(Boolean)
  const said = lines.filter((l) => l.includes('serve file')).map((l) => JSON.parse(l))
  expect(said).toHaveLength(1)
  expect(said[0]).toMatchObject({ level: 'warn' })
  expect(said[0].msg).toContain('SIGHUP')
}, 30_000)
