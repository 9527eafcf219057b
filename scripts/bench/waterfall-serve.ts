/**
 * @module
 * The cost waterfall's gateway (issue 24): the real gateway, built from the same parts as
 * `switchyard serve`, with ONE piece of the request path switched off — a bench-only build. The
 * switches live here and nowhere in `src/`: the product has no way to skip its own bookkeeping.
 * Each switch replaces the piece with the least that keeps the request answering, so the
 * difference to the full path is what the piece costs.
 *
 * `bun scripts/bench/waterfall-serve.ts <config> <switch>` prints `{"url", "pid"}` when listening.
 * Run it with `BUN_CONFIG_MAX_HTTP_REQUESTS` set (serve's supervisor sets it for the product).
 */
import { buildDeps } from '../../src/app/build.ts'
import { startServer } from '../../src/app/serve.ts'
import type { Found } from '../../src/auth/cache.ts'
import { loadConfigFile } from '../../src/config/index.ts'
import { Pipeline } from '../../src/pipeline/run.ts'
import { requestId } from '../../src/server/errors.ts'
import { openStores } from '../../src/store/index.ts'
import { chatForwarding } from '../../src/surfaces/chat/forward.ts'
import { chatSurface } from '../../src/surfaces/chat/index.ts'
import { validateChatRequest } from '../../src/surfaces/chat/validate.ts'
import { Exchange, pathOf, surfaceOf } from '../../src/traffic/traffic.ts'

/** The pieces a row can switch off; `none` is the full path. */
export const SWITCHES = [
  'none',
  'access-log',
  'metrics',
  'traffic',
  'validation',
  'auth-cache',
  'admission',
  'usage',
  'elysia',
  'relay',
] as const
export type Switch = (typeof SWITCHES)[number]

const [configPath, off] = Bun.argv.slice(2) as [string, Switch]
if (!configPath || !SWITCHES.includes(off)) {
  console.error(`usage: bun scripts/bench/waterfall-serve.ts <config> <${SWITCHES.join('|')}>`)
  process.exit(2)
}

const config = await loadConfigFile(configPath, process.env)
config.server.port = 0
if (off === 'access-log') config.logging.access = false
const store = await openStores(config)
const deps = buildDeps(config, { store })
const noop = () => {}

switch (off) {
  case 'metrics':
    // Every recording method of the registry does nothing; the gauges' sources stay.
    for (const m of [
      'requestFinished',
      'limitRejected',
      'upstreamError',
      'upstreamAttempt',
      'malformedEvents',
    ] as const)
      deps.metrics[m] = noop
    break
  case 'traffic': {
    // No in-flight set, no request → exchange map, no end: with it go the access line and the
    // request metrics (both written at the end); the pipeline makes its own exchange.
    const t = deps.traffic
    t.begin = (request: Request, id: string) => {
      const path = pathOf(request.url)
      return new Exchange(id, surfaceOf(path), request.method, path)
    }
    t.of = () => undefined
    t.end = noop
    t.refused = noop
    break
  }
  case 'validation':
    // JSON.parse under the structural limits only: no schema check of the body.
    chatSurface.decode = (text) => {
      const view = JSON.parse(text)
      return { model: view.model, view, stream: view.stream === true }
    }
    void validateChatRequest // the piece switched off (kept imported so the row names it)
    break
  case 'auth-cache': {
    // The key's hash is still computed; the lookup answers from one remembered entry.
    const cache = deps.authCache
    const find = cache.find.bind(cache)
    let hit: Found | null = null
    cache.find = (hash: string) => {
      if (hit) return hit
      const found = find(hash)
      if (found instanceof Promise) return found.then((f) => (hit = f))
      hit = found
      return found
    }
    break
  }
  case 'admission': {
    // No admission transaction (and so no reservation to settle): every request is let in.
    const open = { limit: null, used: 0, remaining: null, resetAt: null }
    deps.store.admit = async (input) => ({
      admitted: true,
      gatewayId: input.gatewayId,
      minute: open,
      day: open,
    })
    break
  }
  case 'usage':
    deps.recorder.record = noop
    break
  case 'relay': {
    // The chat pass-through stream as a pure pipe: no event is read (no usage, no relayed-text
    // count, no model rewrite, no check), as the bare prototype pipes. The writer still holds
    // the status until the first bytes; the settlement has no usage to go by.
    const keepalive = new TextEncoder().encode(': keepalive\n\n')
    chatForwarding.relay = (upstream, ctx) => {
      let relayed = 0
      const encoder = {
        keepalive,
        holdForContent: false,
        encode: (chunk: Uint8Array) => {
          relayed += chunk.byteLength
          return chunk
        },
        end: () => null,
        error: () => new Uint8Array(0),
        usage: () => null,
        relayedBytes: () => relayed,
      }
      return { plan: { body: upstream.body!, stages: [], ctx }, encoder }
    }
    break
  }
}

let url: string
if (off === 'elysia') {
  // The same pipeline behind a plain Bun.serve route table: what Elysia's routing, hooks and
  // response handling cost. The hot endpoint only; the traffic bookkeeping as the app does it.
  const pipeline = new Pipeline(deps)
  const { traffic } = deps
  const server = Bun.serve({
    hostname: config.server.host,
    port: 0,
    idleTimeout: config.server.idleTimeoutS,
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    development: false,
    routes: {
      '/v1/chat/completions': {
        async POST(request, srv) {
          const id = requestId(request.headers.get('x-request-id'))
          const ex = traffic.begin(request, id)
          const res = await pipeline.handle(chatSurface, request, srv, { 'x-request-id': id })
          ex.status = res.status
          if (!ex.deferred) traffic.end(ex, res.status)
          return res
        },
      },
    },
    fetch: () => new Response('{"error":"not found"}', { status: 404 }),
  })
  url = `http://${config.server.host}:${server.port}`
} else {
  url = startServer(config, deps).url
}
// A normal exit on SIGTERM, so `bun --cpu-prof` writes its profile.
process.once('SIGTERM', () => process.exit(0))
console.log(JSON.stringify({ url, pid: process.pid }))
