/**
 * @module
 * `switchyard reload [--host H] [--port P]`: asks the running `serve` to reload its config file
 * (DESIGN §13) through `POST /admin/v1/reload`, with the admin token of the config — the same
 * file serve reads, so no pid file is needed and the answer (what changed, or every problem) comes
 * back to print; with `--workers N` every process has reloaded when it returns. A config without
 * an admin token has no admin API: then `kill -HUP PID` of serve reloads it.
 *
 * The file is read here first (provider secrets may be unset in this shell: the gateway reads
 * them from its own environment): a file with problems is refused here with all of them and
 * nothing is sent; the running gateway keeps its config either way.
 */
import { type ConfigChanges, changedPaths } from '../app/config-changes.ts'
import { GatewayError } from '../util/errors.ts'
import { flagString, type Parsed } from './args.ts'
import { checkCommand, intSetting, loadConfig } from './context.ts'
import type { Io } from './io.ts'

/** A reload reads a file and builds the config's parts (ms), every worker's too; the rest is margin. */
const ANSWER_TIMEOUT_MS = 30_000

export async function reloadCommand(p: Parsed, io: Io): Promise<number> {
  checkCommand(p, { usage: 'reload [--host H] [--port P]', words: 1, flags: ['host', 'port'] })
  const config = await loadConfig(p, io, { secrets: false })
  const token = config.admin.token
  if (token === null) {
    throw new Error(
      'reload asks the running gateway through its admin API, which is off without admin.token in the config: send the serve process SIGHUP (kill -HUP PID) instead (with a token set in the file, that SIGHUP turns the admin API on for the next `switchyard reload`)',
    )
  }
  const port = intSetting(p, io, 'port', 'PORT', 1, 65535) ?? config.server.port
  if (port === 0) {
    throw new Error('server.port is 0 (any free port): pass the port serve printed with --port')
  }
  const host = reachable(flagString(p, 'host') ?? (io.env.HOST || config.server.host))
  const url = `http://${host}:${port}/admin/v1/reload`
  let res: Response
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS),
    })
  } catch (err) {
    throw new Error(
      `no gateway answered at ${url} (${(err as Error).message}): is switchyard serve running with this config? Pass --host and --port if it listens elsewhere`,
    )
  }
  const body = (await res.json().catch(() => null)) as Record<string, unknown> | null
  if (res.status === 404) {
    // The gateway started without a token: the one the file has now is read by a reload it cannot be asked for here.
    throw new Error(
      `the gateway at ${url} has no admin API (it runs without admin.token): send the serve process SIGHUP (kill -HUP PID) to reload the file; a token set there then turns the admin API on`,
    )
  }
  if (!res.ok) throw relayed(res.status, body)
  io.out(p.flags.json === true ? JSON.stringify(body) : said(body as unknown as Answer))
  return 0
}

/**
 * The gateway's refusal as this command's error (its code kept for `--json`): `config_invalid` and
 * `restart_required` with every problem, or the admin guard's (a wrong token, throttled).
 */
function relayed(status: number, body: Record<string, unknown> | null): GatewayError {
  const answer = (body?.error ?? {}) as { message?: string; code?: string; param?: string | null }
  const message = answer.message ?? `the gateway answered HTTP ${status} without an error body`
  return new GatewayError(status, answer.code ?? 'upstream_error', message, { param: answer.param ?? null })
}

interface Answer {
  outcome: 'applied' | 'unchanged'
  generation: number
  source: string
  changed: ConfigChanges
  others?: Array<{ pid: number; outcome: string }>
}

/** One line: what changed, by the file's paths (`server.cors_origins, plans.free, plans.extra (added)`). */
function said(a: Answer): string {
  const others = a.others?.length
    ? ` (and in ${a.others.length} other process${a.others.length > 1 ? 'es' : ''}: ${a.others.map((o) => `${o.pid} ${o.outcome}`).join(', ')})`
    : ''
  if (a.outcome === 'unchanged') return `config ${a.source} unchanged: nothing to reload${others}`
  return `reloaded ${a.source} (generation ${a.generation}): ${changedPaths(a.changed).join(', ')}${others}`
}

/** A wildcard listen address is reached on this machine's loopback. */
function reachable(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1'
  if (host === '::' || host === '[::]') return '[::1]'
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host
}
