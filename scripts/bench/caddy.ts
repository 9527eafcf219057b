/**
 * @module
 * Caddy (a compiled Go reverse proxy, no LLM work) as the c=1 lane's floor: `reverse_proxy` to the
 * fast mock on 127.0.0.1, admin and HTTPS off. Found as `$CADDY`, else `caddy` on the PATH; when
 * neither is there the lane skips its row and says so. No root install is needed:
 * `apt-get download caddy && dpkg -x caddy_*.deb /tmp/caddy` then `CADDY=/tmp/caddy/usr/bin/caddy`.
 */
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

export interface Caddy {
  /** Base URL ending in `/v1`, as the mock's. */
  url: string
  version: string
  pid: number
  stop(): Promise<void>
}

/** `$CADDY` when it names a file, else `caddy` on the PATH; null when neither (the row skips). */
export function findCaddy(): string | null {
  const fromEnv = process.env.CADDY
  if (fromEnv) return existsSync(fromEnv) ? fromEnv : null
  return Bun.which('caddy')
}

async function freePort(): Promise<number> {
  const s = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const port = s.port
  s.stop(true)
  return port
}

/** Starts Caddy in front of `upstream` (a base URL ending in /v1); resolves once it answers. */
export async function startCaddy(exe: string, upstream: string, dir: string): Promise<Caddy> {
  const up = new URL(upstream)
  const port = await freePort()
  const file = join(dir, 'Caddyfile')
  writeFileSync(
    file,
    `{\n\tadmin off\n\tauto_https off\n}\nhttp://127.0.0.1:${port} {\n\treverse_proxy ${up.host}\n}\n`,
  )
  const version = (Bun.spawnSync([exe, 'version']).stdout.toString().trim().split(' ')[0] ?? '?').trim()
  const proc = Bun.spawn([exe, 'run', '--config', file, '--adapter', 'caddyfile'], {
    stdout: 'ignore',
    stderr: Bun.file(join(dir, 'caddy.log')),
    stdin: 'ignore',
    env: { ...process.env, HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir },
  })
  const url = `http://127.0.0.1:${port}${up.pathname}`
  const deadline = Date.now() + 10_000
  for (;;) {
    try {
      const res = await fetch(`${url}/models`)
      await res.arrayBuffer()
      if (res.ok) break
    } catch {}
    if (Date.now() > deadline || proc.exitCode !== null) {
      proc.kill('SIGKILL')
      throw new Error(`caddy did not start; see ${join(dir, 'caddy.log')}`)
    }
    await Bun.sleep(50)
  }
  return {
    url,
    version,
    pid: proc.pid,
    stop: async () => {
      proc.kill()
      await proc.exited
    },
  }
}
