/**
 * @module
 * In-process cost of the per-request bookkeeping, with the real pieces on a real SQLite file:
 * `authenticate` (key hash + cached lookup + plan; and with the cache off, the store lookup every
 * request pays on a miss), `store.admit` (the limiter's write transaction —
 * the admission row) and `recorder.record` (the outcome, written in batches; its flush is
 * included). `admit` is timed one request at a time (no group commit to share: the cost at low
 * load) and 16 at once (as under load); also on a plan with limits, which counts the windows.
 */
import { join } from 'node:path'
import { buildDeps } from '../../src/app/build.ts'
import { authenticate } from '../../src/auth/authenticate.ts'
import { AuthCache } from '../../src/auth/cache.ts'
import { parseConfig } from '../../src/config/index.ts'
import { limitRows } from '../../src/limits/rows.ts'
import type { StreamEncoder } from '../../src/pipeline/stream/encoder.ts'
import type { StreamSource } from '../../src/pipeline/stream/types.ts'
import { writeStream } from '../../src/pipeline/stream/writer.ts'
import type { EncodeContext } from '../../src/pipeline/surface.ts'
import { OpenAIChunkDecoder } from '../../src/providers/openai/stream.ts'
import { parseSSE } from '../../src/providers/sse/index.ts'
import { upstreamPlan } from '../../src/providers/stream-plan.ts'
import type { CallContext } from '../../src/providers/types.ts'
import type { AdmitInput, Completion } from '../../src/store/types.ts'
import { chatForwarding } from '../../src/surfaces/chat/forward.ts'
import { ChatChunkEncoder } from '../../src/surfaces/chat/stream-encoder.ts'
import { MessagesRelay } from '../../src/surfaces/messages/pass-through.ts'
import { responsesRelay } from '../../src/surfaces/responses/relay.ts'
import { newRequestId } from '../../src/util/ids.ts'
import { silentLogger } from '../../src/util/log.ts'
import { buildResponsesFrames } from '../mock-upstream/responses-wire.ts'
import { buildStreamFrames } from '../mock-upstream/wire.ts'
import { configDoc, METERED_PLAN, type Mocks } from './processes.ts'

export interface MicroResult {
  iterations: number
  /** authenticate as served: the key found in the authentication cache. */
  authUs: number
  /** authenticate with the cache off: the store's key lookup on every request (a cache miss). */
  authUncachedUs: number
  admitUs: number
  /** admit with 16 requests arriving together (they share one group commit). */
  admitBatchedUs: number
  recordUs: number
  sumUs: number
  /** admit with rpm/rpd set (window counts on the hot path), informational. */
  admitLimitedUs: number
  /** Tokens and money on the store (tokensMicro). */
  tokens: TokensMicro
  /** The stream relay in-process (no sockets), per stream of `streamEvents` upstream events. */
  stream: {
    events: number
    parseUs: number
    decodeUs: number
    /** Piped: parseSSE → decoder TransformStream → writer. */
    relayUs: number
    /** The same stream as a StreamPlan: parse, decode and encode in one stage. */
    oneStageUs: number
    /** The same stream passed through to the chat surface (chat → openai: the byte relay as the plan's stage). */
    chatForwardUs: number
    /** Same-wire byte relays (ByteRelay), per recorded stream: messages → anthropic, responses → Responses. */
    messagesUs: number
    messagesEvents: number
    responsesUs: number
    responsesEvents: number
  }
}

/**
 * The stream relay's JS cost without sockets: one upstream body (all events in one buffer, as the
 * mock sends them) through parseSSE, then + the OpenAI decoder, then + the SSE writer read out to
 * a string. Each stage includes the ones before it. Then the one-stage path (a `StreamPlan`) and
 * the byte relays of the same-wire surfaces. The timed loops are interleaved, so that load on the
 * machine falls on every row alike.
 */
export async function streamPipeline(n: number): Promise<MicroResult['stream']> {
  const frames = buildStreamFrames({ model: 'bench', created: 0, words: 20, usage: true, tools: [] })
  const bytes = Buffer.concat(frames)
  const responsesFrames = buildResponsesFrames({
    model: 'bench',
    created: 0,
    words: 20,
    usage: true,
    tools: [],
  })
  const responsesBytes = Buffer.concat(responsesFrames)
  const anthropicBytes = await anthropicStreamBytes()
  const provider = {
    prefix: 'mock',
    kind: 'openai' as const,
    base_url: 'http://127.0.0.1:1',
    api_key: 'k',
    models: [],
  }
  const ctx = {
    provider,
    model: { name: 'bench' },
    signal: new AbortController().signal,
    requestId: 'micro',
    timeouts: { firstByteMs: 60_000, idleMs: 60_000, totalMs: 600_000 },
  } as unknown as CallContext
  const encodeCtx = {
    modelId: 'mock/bench',
    upstreamModel: 'bench',
    provider: ctx.provider,
    requestId: 'micro',
    view: {},
    includeUsage: true,
  } as unknown as EncodeContext<never>
  const writeOpts = { keepaliveMs: 10_000, holdMs: 5_000, onFinish: () => {} }
  const write = async <T>(source: StreamSource<T>, encoder: StreamEncoder<T>) => {
    const out = await writeStream(source, encoder, writeOpts)
    if (out.status !== 'ok') throw out.error
    await new Response(out.body).text()
  }
  const oneStage = () =>
    write(upstreamPlan(body(), ctx, new OpenAIChunkDecoder('mock')), new ChatChunkEncoder('mock/bench', true))
  const messages = () =>
    write({ body: of(anthropicBytes), stages: [], ctx }, new MessagesRelay(encodeCtx as never))
  const forwardCtx = {
    ...encodeCtx,
    view: { stream: true, stream_options: { include_usage: true } },
  } as unknown as EncodeContext<never>
  const chatForward = async () => {
    const upstream = new Response(body(), { headers: { 'content-type': 'text/event-stream' } })
    const { plan, encoder } = await chatForwarding.relay(upstream, ctx, forwardCtx as never, false)
    await write(plan, encoder)
  }
  const responses = () =>
    write({ body: of(responsesBytes), stages: [], ctx }, responsesRelay(encodeCtx as never))
  const of = (b: Uint8Array) =>
    new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(b)
        c.close()
      },
    })
  const body = () => of(bytes)
  const decoded = () => parseSSE(body()).pipeThrough(new TransformStream(new OpenAIChunkDecoder('mock')))
  const drain = async (s: ReadableStream<unknown>) => {
    const r = s.getReader()
    while (!(await r.read()).done) {}
  }
  const relay = async () => {
    const out = await writeStream(decoded(), new ChatChunkEncoder('mock/bench', true), {
      keepaliveMs: 10_000,
      holdMs: 5_000,
      onFinish: () => {},
    })
    if (out.status !== 'ok') throw out.error
    await new Response(out.body).text()
  }
  const ops = {
    parse: () => drain(parseSSE(body())),
    decode: () => drain(decoded()),
    relay,
    oneStage,
    chatForward,
    messages,
    responses,
  }
  for (const op of Object.values(ops)) for (let i = 0; i < 200; i++) await op()
  const total = { parse: 0, decode: 0, relay: 0, oneStage: 0, chatForward: 0, messages: 0, responses: 0 }
  const rounds = 10
  for (let r = 0; r < rounds; r++) {
    for (const [name, op] of Object.entries(ops))
      total[name as keyof typeof total] += await perOp(n / rounds, op)
  }
  const us = (k: keyof typeof total) => total[k] / rounds
  return {
    events: frames.length,
    parseUs: us('parse'),
    decodeUs: us('decode'),
    relayUs: us('relay'),
    oneStageUs: us('oneStage'),
    chatForwardUs: us('chatForward'),
    messagesUs: us('messages'),
    messagesEvents: countEvents(anthropicBytes),
    responsesUs: us('responses'),
    responsesEvents: responsesFrames.length,
  }
}

/** The recorded Anthropic text stream, framed as Anthropic frames it (as the bench's mock serves it). */
async function anthropicStreamBytes(): Promise<Uint8Array> {
  const file = join(
    import.meta.dir,
    '..',
    '..',
    'test',
    'fixtures',
    'reference',
    'recorded',
    'anthropic-text.chunks.txt',
  )
  const lines = (await Bun.file(file).text()).split('\n').filter((l) => l.trim())
  const framed = lines.map((l) => `event: ${(JSON.parse(l) as { type: string }).type}\ndata: ${l}\n\n`)
  return new TextEncoder().encode(framed.join(''))
}

function countEvents(b: Uint8Array): number {
  return new TextDecoder().decode(b).split('\n\n').length - 1
}

async function perOp(n: number, op: (i: number) => unknown): Promise<number> {
  const t0 = performance.now()
  for (let i = 0; i < n; i++) await op(i)
  return ((performance.now() - t0) * 1000) / n
}

export async function runMicro(dir: string, mocks: Mocks, iterations: number): Promise<MicroResult> {
  const config = parseConfig(configDoc(mocks, join(dir, 'micro.db')), 'bench')
  const deps = buildDeps(config, { log: silentLogger })
  try {
    await deps.accounts.createAccount('micro', 'unlimited')
    const { key } = await deps.accounts.createKey('micro', 'bench')
    const header = `Bearer ${key}`
    const auth = await authenticate(deps, header)
    const admitInput = (i: number, limited: boolean) => ({
      accountId: auth.account.id,
      keyId: auth.key.id,
      model: 'mock/bench',
      requestId: `req_micro_${limited ? 'l' : 'u'}${i}`,
      gatewayId: newRequestId(),
      stream: false,
      now: Date.now(),
      rpm: limited ? 10_000_000 : null,
      rpd: limited ? 10_000_000 : null,
      suspension: { maxRejections: 50, windowMs: 600_000, durationMs: 900_000 },
    })
    /** Admitted requests, with where they were counted (the pipeline passes this on to the recorder). */
    const usageIds: Array<{ gatewayId: string; requestId: string; at: number }> = []

    const warm = Math.min(1000, iterations)
    await perOp(warm, () => authenticate(deps, header))
    await perOp(warm, (i) => deps.store.admit(admitInput(-1 - i, false)))

    const uncached = { ...deps, authCache: new AuthCache(deps.store, { maxKeys: 0 }) }
    await perOp(warm, () => authenticate(uncached, header))
    const authUs = await perOp(iterations, () => authenticate(deps, header))
    const authUncachedUs = await perOp(iterations, () => authenticate(uncached, header))
    const admitUs = await perOp(iterations, async (i) => {
      const input = admitInput(i, false)
      const r = await deps.store.admit(input)
      if (r.admitted)
        usageIds.push({ gatewayId: r.gatewayId, requestId: input.requestId, at: r.loggedAt ?? input.now })
    })
    const group = 16
    const batchedN = Math.ceil(iterations / group)
    const admitBatchedUs =
      (await perOp(batchedN, (i) =>
        Promise.all(
          Array.from({ length: group }, async (_, j) => {
            const input = admitInput(iterations + i * group + j, false)
            const r = await deps.store.admit(input)
            if (r.admitted)
              usageIds.push({
                gatewayId: r.gatewayId,
                requestId: input.requestId,
                at: r.loggedAt ?? input.now,
              })
          }),
        ),
      )) / group
    const t0 = performance.now()
    for (const { gatewayId, requestId, at } of usageIds) {
      deps.recorder.record({
        gatewayId,
        requestId,
        surface: 'chat',
        stream: false,
        counted: { accountId: auth.account.id, keyId: auth.key.id, model: 'mock/bench', at },
        status: 200,
        promptTokens: 20,
        completionTokens: 20,
        latencyMs: 3,
        ttftMs: null,
        errorCode: null,
      })
    }
    await deps.recorder.flush()
    const recordUs = ((performance.now() - t0) * 1000) / usageIds.length
    const limitedN = Math.min(iterations, 2000)
    const admitLimitedUs = await perOp(limitedN, (i) => deps.store.admit(admitInput(i, true)))
    const tokens = await tokensMicro(deps, iterations)
    const stream = await streamPipeline(Math.max(500, Math.round(iterations / 10)))
    return {
      iterations,
      authUs,
      authUncachedUs,
      admitUs,
      admitBatchedUs,
      recordUs,
      sumUs: authUs + admitUs + recordUs,
      admitLimitedUs,
      tokens,
      stream,
    }
  } finally {
    await deps.recorder.flush()
    deps.store.close()
  }
}

/** µs per request: plain = no charge; metered = the bench's metered plan (tpm + tpd + monthly budget). */
export interface TokensMicro {
  plainUs: number
  meteredUs: number
  /** 16 arriving together (one group commit). */
  plainBatchedUs: number
  meteredBatchedUs: number
  /** store.complete per request in batches of 256: outcomes alone / with their settlements. */
  completeUs: number
  completeSettledUs: number
}

/**
 * The store's side of tokens and money: `store.admit` with the metered plan's charge rows against
 * the same admission without them, and the usage flush with and without the settlements. Time is
 * simulated (30 ms a request, after a warm-up longer than a minute), so every metered admission
 * sees the minute window slide, as in a long run; the loops are interleaved, and each is timed
 * in this process's CPU time (medians of 20 rounds), so other load on the machine counts little.
 */
export async function tokensMicro(deps: ReturnType<typeof buildDeps>, n: number): Promise<TokensMicro> {
  const account = await deps.accounts.createAccount('micro-tokens', 'unlimited')
  const rows = limitRows(METERED_PLAN as never, null).filter((r) => r.resource !== 'requests')
  const charge = { rows, inputTokens: 40, wantOutput: 4096, price: { input: 150_000, output: 600_000 } }
  let clock = Date.now() - 3_600_000
  const input = (metered: boolean): AdmitInput => {
    clock += 30
    return {
      accountId: account.id,
      keyId: 'micro-tokens',
      model: 'mock/bench-priced',
      requestId: 'req_micro_tokens',
      gatewayId: newRequestId(),
      stream: false,
      now: clock,
      rpm: null,
      rpd: null,
      suspension: null,
      ...(metered ? { charge } : {}),
    }
  }
  const done: Completion[][] = [[], []]
  const admit = async (metered: boolean) => {
    const r = await deps.store.admit(input(metered))
    if (!r.admitted) throw new Error('refused')
    done[metered ? 1 : 0]!.push({
      gatewayId: r.gatewayId,
      requestId: 'req_micro_tokens',
      surface: 'chat',
      stream: false,
      status: 200,
      promptTokens: 30,
      completionTokens: 20,
      costMicros: 17,
      latencyMs: 3,
      ttftMs: null,
      errorCode: null,
      counted: { accountId: account.id, keyId: 'micro-tokens', model: 'mock/bench-priced', at: r.loggedAt! },
      ...(r.reservation
        ? { settlement: { handle: r.reservation.handle, accountId: account.id, tokens: 50, micros: 17 } }
        : {}),
    })
  }
  const batch = (metered: boolean) => Promise.all(Array.from({ length: 16 }, () => admit(metered)))
  const complete = async (metered: boolean) => {
    const all = done[metered ? 1 : 0]!
    done[metered ? 1 : 0] = []
    for (let i = 0; i < all.length; i += 256) await deps.store.complete(all.slice(i, i + 256))
    return all.length
  }
  for (let i = 0; i < 2500; i++) await admit(i % 2 === 0)
  await complete(false)
  await complete(true)
  // CPU time (this process's), not wall time: the machine's other load does not count.
  const cpu = () => {
    const u = process.cpuUsage()
    return u.user + u.system
  }
  const per = async (count: number, op: () => Promise<unknown>) => {
    const t0 = cpu()
    const n = await op()
    return (cpu() - t0) / (typeof n === 'number' ? n : count)
  }
  const rounds = 20
  const m = 16 * Math.max(1, Math.floor(n / rounds / 16))
  const t = {
    plain: [] as number[],
    metered: [] as number[],
    plainB: [] as number[],
    meteredB: [] as number[],
  }
  const c = { plain: [] as number[], settled: [] as number[] }
  for (let r = 0; r < rounds; r++) {
    t.plain.push(
      await per(m, async () => {
        for (let i = 0; i < m; i++) await admit(false)
      }),
    )
    t.metered.push(
      await per(m, async () => {
        for (let i = 0; i < m; i++) await admit(true)
      }),
    )
    t.plainB.push(
      await per(m, async () => {
        for (let i = 0; i < m / 16; i++) await batch(false)
      }),
    )
    t.meteredB.push(
      await per(m, async () => {
        for (let i = 0; i < m / 16; i++) await batch(true)
      }),
    )
    c.plain.push(await per(0, () => complete(false)))
    c.settled.push(await per(0, () => complete(true)))
  }
  const median = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!
  return {
    plainUs: median(t.plain),
    meteredUs: median(t.metered),
    plainBatchedUs: median(t.plainB),
    meteredBatchedUs: median(t.meteredB),
    completeUs: median(c.plain),
    completeSettledUs: median(c.settled),
  }
}
