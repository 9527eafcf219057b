/**
 * @module
 * A real local Gemini API upstream (Bun.serve on 127.0.0.1, port 0) that bills like Google's and
 * keeps the bill, for tests of what the gateway reserves for a Gemini request:
 * `POST /v1beta/models/{model}:generateContent` and `:streamGenerateContent?alt=sse`.
 *
 * Billing (`usageMetadata`): input = one token a word of every text part + 8 a content, plus
 * `mediaTokens` for each `inlineData` / `fileData` part (258: an image, or a PDF page) and
 * `cachedTokens` for a `cachedContent` (reported in `cachedContentTokenCount`, and inside
 * `promptTokenCount` as Google reports it). Output: `generationConfig.candidateCount` candidates
 * (default 1), EACH `answerTokens` words (one token a word) or `maxOutputTokens` when that is
 * lower (finishReason `MAX_TOKENS`), billed together in `candidatesTokenCount` as Google bills
 * every candidate. A stream sends `perEvent` words of every candidate an event, the usage on the
 * last.
 *
 * @example
 * const up = await startBillingGemini({ answerTokens: 300 })
 * // provider: { kind: 'gemini', base_url: up.url, api_key: 'k', ... }
 * up.bills.at(-1) // { candidates: 2, input: 12, output: 600, cap: null, stream: false }
 */

export interface GeminiBill {
  cap: number | null
  candidates: number
  stream: boolean
  input: number
  output: number
}

export interface BillingGemini {
  url: string
  bills: GeminiBill[]
  /** Every request's path, body text and parsed body, in order. */
  requests: Array<{ path: string; raw: string; body: any }>
  stop(): Promise<void>
}

const ROUTE = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent)$/
const words = (s: string) => s.split(/\s+/).filter(Boolean).length

export async function startBillingGemini(
  opts: {
    answerTokens?: number
    mediaTokens?: number
    cachedTokens?: number
    perEvent?: number
    ignoreCap?: boolean
    usage?: boolean
    eventDelayMs?: number
    toolUseTokens?: number
  } = {},
): Promise<BillingGemini> {
  const answerTokens = opts.answerTokens ?? 100
  const mediaTokens = opts.mediaTokens ?? 258
  const cachedTokens = opts.cachedTokens ?? 32_768
  const perEvent = opts.perEvent ?? 25
  const bills: GeminiBill[] = []
  const requests: BillingGemini['requests'] = []

  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const url = new URL(req.url)
      const route = ROUTE.exec(url.pathname)
      if (req.method !== 'POST' || !route)
        return Response.json(
          { error: { code: 404, message: 'Not found', status: 'NOT_FOUND' } },
          { status: 404 },
        )
      const raw = await req.text()
      const body = JSON.parse(raw)
      requests.push({ path: `${url.pathname}${url.search}`, raw, body })
      let input = 0
      for (const c of [
        ...(body.contents ?? []),
        ...(body.systemInstruction ? [body.systemInstruction] : []),
      ]) {
        input += 8
        for (const p of c.parts ?? []) {
          if (typeof p.text === 'string') input += words(p.text)
          if (p.inlineData || p.fileData) input += mediaTokens
        }
      }
      const cached = body.cachedContent ? cachedTokens : 0
      input += cached
      const builtIn = (body.tools ?? []).some((t: object) =>
        Object.keys(t).some((k) => k !== 'functionDeclarations'),
      )
      const toolUse = builtIn ? (opts.toolUseTokens ?? 0) : 0
      const g = body.generationConfig ?? {}
      const n: number = g.candidateCount ?? 1
      const cap: number | null = g.maxOutputTokens ?? null
      const each = cap === null || opts.ignoreCap ? answerTokens : Math.min(cap, answerTokens)
      const stream = route[2] === 'streamGenerateContent'
      const bill = { cap, candidates: n, stream, input: input + toolUse, output: each * n }
      const paced = stream && opts.eventDelayMs !== undefined
      if (!paced) bills.push(bill)
      const usageMetadata = {
        promptTokenCount: input,
        candidatesTokenCount: each * n,
        totalTokenCount: input + toolUse + each * n,
        ...(cached ? { cachedContentTokenCount: cached } : {}),
        ...(toolUse ? { toolUsePromptTokenCount: toolUse } : {}),
      }
      const reports = opts.usage !== false
      const finishReason = each < answerTokens ? 'MAX_TOKENS' : 'STOP'
      const candidate = (index: number, count: number, last: boolean) => ({
        content: { role: 'model', parts: [{ text: 'w '.repeat(count) }] },
        ...(last ? { finishReason } : {}),
        index,
      })
      const all = (count: number, last: boolean) =>
        Array.from({ length: n }, (_, i) => candidate(i, count, last))
      if (!stream)
        return Response.json({
          candidates: all(each, true),
          ...(reports ? { usageMetadata } : {}),
          modelVersion: route[1],
        })
      const events: string[] = []
      const counts: number[] = []
      for (let sent = 0; sent < each || events.length === 0; sent += perEvent) {
        const count = Math.min(perEvent, each - sent)
        const last = sent + perEvent >= each
        counts.push(count)
        events.push(
          `data: ${JSON.stringify({ candidates: all(count, last), ...(last && reports ? { usageMetadata } : {}), modelVersion: route[1] })}\r\n\r\n`,
        )
      }
      const headers = { 'content-type': 'text/event-stream' }
      if (!paced) return new Response(events.join(''), { headers })
      // Paced: each event billed as it is sent; the bill pushed when the stream ends or is left.
      const enc = new TextEncoder()
      let sent = 0
      let done = false
      const settle = () => {
        if (done) return
        done = true
        bills.push({ ...bill, output: sent * n })
      }
      const events_ = new ReadableStream<Uint8Array>({
        async start(c) {
          try {
            for (let i = 0; i < events.length; i++) {
              if (done) return
              c.enqueue(enc.encode(events[i]!))
              sent += counts[i]!
              if (i < events.length - 1) await Bun.sleep(opts.eventDelayMs!)
            }
            settle()
            c.close()
          } catch {
            settle()
          }
        },
        cancel: settle,
      })
      return new Response(events_, { headers })
    },
  })
  return {
    url: `http://127.0.0.1:${server.port}`,
    bills,
    requests,
    stop: async () => {
      server.stop(true)
    },
  }
}
