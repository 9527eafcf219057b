/**
 * @module
 * `switchyard reload`: asks the running `serve` to reload its config file (DESIGN §13) through
 * `POST /admin/v1/reload`, at the address and with the credential the running gateway wrote in
 * its serve file (cli/serve-file.ts) — not the file's `server.port` and `admin.token`, which a
 * reload may be changing — so the answer (what changed, or every problem) comes back to print;
 * with `--workers N` every process has reloaded when it returns. Several `serve` processes on one
 * database (each its own serve file) are each asked, and each answer is printed with its pid.
 *
 * The file is read here first (provider secrets may be unset in this shell: the gateway reads
 * them from its own environment): a file with problems is refused here with all of them and
 * nothing is sent; the running gateway keeps its config either way.
 */
import { join } from 'node:path'
import { type ConfigChanges, changedPaths } from '../app/config-changes.ts'
import { GatewayError } from '../util/errors.ts'
import type { Parsed } from './args.ts'
import { checkCommand, configPath, loadConfig } from './context.ts'
import { CliError } from './errors.ts'
import type { Io } from './io.ts'
import { pruneServeFiles, type ServeFile, servePlaces } from './serve-file.ts'

/** A reload reads a file and builds the config's parts (ms), every worker's too; the rest is margin. */
const ANSWER_TIMEOUT_MS = 30_000

export async function reloadCommand(p: Parsed, io: Io): Promise<number> {
  checkCommand(p, { usage: 'reload', words: 1 })
  const config = await loadConfig(p, io, { secrets: false })
  const file = configPath(p, io)
  const places = servePlaces(config, file, io.env)
  const { found, removed } = pruneServeFiles(places)
  for (const path of removed) io.err(`removed ${path}: its serve process no longer runs (a kill -9?)`)
  if (found.length === 0) {
    throw new CliError(
      'gateway_not_found',
      `no running gateway found: no serve file of a running process in ${places.map((place) => join(place.dir, `${place.name}.<pid>.serving`)).join(' or ')} (switchyard serve writes one while it runs with this config and database: a changed database.path or --db needs a restart, and a serve that could write it in none of these places says so in its log: "the serve file could not be written"). Is serve running? Otherwise send its process SIGHUP (kill -HUP PID)`,
    )
  }
  const asked = await Promise.all(found.map(({ path, file }) => ask(path, file)))
  const reached = asked.filter((a) => !('unreachable' in a)) as Array<Reached>
  // A file a `kill -9` left behind: said, but not a failure while another gateway answered.
  for (const a of asked) if ('unreachable' in a && reached.length > 0) io.err(a.unreachable)
  if (reached.length === 0)
    throw new CliError(
      'gateway_unreachable',
      asked.map((a) => (a as { unreachable: string }).unreachable).join('\n'),
    )
  if (reached.length === 1) {
    const [only] = reached
    if ('refused' in only!) throw only.refused
    io.out(p.flags.json === true ? JSON.stringify(only!.body) : said(only!.body as unknown as Answer))
    return 0
  }
  // Several gateways on one database: each reloaded its own file; each says how.
  if (p.flags.json === true) {
    const each = reached.map((a) =>
      'refused' in a
        ? { pid: a.pid, error: { code: a.refused.code, message: a.refused.message, param: a.refused.param } }
        : { pid: a.pid, ...a.body },
    )
    io.out(JSON.stringify({ gateways: each }))
  } else {
    for (const a of reached) {
      if ('refused' in a) io.err(`gateway ${a.pid}: ${a.refused.message}`)
      else io.out(`gateway ${a.pid}: ${said(a.body as unknown as Answer)}`)
    }
  }
  return reached.some((a) => 'refused' in a) ? 1 : 0
}

type Reached = { pid: number; body: Record<string, unknown> } | { pid: number; refused: GatewayError }

/** One gateway's answer to the reload, its refusal, or why it could not be asked. */
async function ask(path: string, serving: ServeFile): Promise<Reached | { unreachable: string }> {
  const url = `${serving.url}/admin/v1/reload`
  let res: Response
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${serving.token}` },
      // One request, one connection (as a one-shot `switchyard reload` has): never a pooled one.
      keepalive: false,
      signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS),
    })
  } catch (err) {
    return {
      unreachable: `no gateway answered at ${url} (${(err as Error).message}), where ${path} says serve (pid ${serving.pid}) listens: it was stopped without removing it (kill -9?); start serve again, or remove the file`,
    }
  }
  const body = (await res.json().catch(() => null)) as Record<string, unknown> | null
  if (!res.ok) return { pid: serving.pid, refused: relayed(res.status, body) }
  return { pid: serving.pid, body: body ?? {} }
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
