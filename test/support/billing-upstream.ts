/**
 * A real local OpenAI chat-completions upstream (Bun.serve on 127.0.0.1, port 0) that bills like
 * a provider and keeps the bill: each answer's usage is what it charged, and `billed` adds them
 * up, so a test can compare what the gateway admitted with what the upstream would invoice.
 *
 * Billing: input = the words of every message's text + 8 per message (a template), output = the
 * request's `max_completion_tokens` (or `max_tokens`), else the model's maximum (`defaultMax`),
 * capped at `answerTokens` — one word per token — for EACH of the request's `n` choices (OpenAI bills
 * completion tokens per choice), or `answerTokens` whatever the cap (`ignoreCap`: an upstream that
 * does not honour it). `reasoningFor`: a reasoning model that thinks that many tokens a choice
 * before it answers and never sends them (OpenAI's o-series and GPT-5 on chat completions): they
 * come out of the cap first (`max_completion_tokens` bounds reasoning and visible output together),
 * are billed as output and reported in `completion_tokens_details.reasoning_tokens`. `jsonOnly`: every answer is JSON, `stream` ignored. `usage: false` never reports usage (JSON or stream). Like OpenAI it refuses a body that sets both
 * `max_tokens` and `max_completion_tokens`. Streams end with the usage chunk when asked for it
 * (`stream_options.include_usage`); a stream the client leaves is billed for what was sent.
 */

export interface BillingUpstream {
  /** Base URL ending in `/v1`. */
  url: string
  /** Tokens billed so far (input + output), and requests answered. */
  billed: { tokens: number; input: number; output: number; requests: number }
  /** Each answer's bill, in the order they ended: its cap, choices, input and output tokens. */
  bills: Array<{ cap: number | null; n: number; stream: boolean; input: number; output: number }>
  /** The output cap of every request received (null: none sent). */
  caps: Array<number | null>
  /** Tokens billed per model (the body's `model`). */
  byModel: Record<string, { input: number; output: number }>
  /** Each request's model, and its trailing assistant message (a prefill) if any. */
  seen: Array<{ model: string; prefill: string | null }>
  stop(): Promise<void>
}

const words = (s: string) => s.split(/\s+/).filter(Boolean).length

/** What the mock bills for a prompt: 8 tokens a message and one a word of its text. */
export function inputTokens(messages: Array<{ content?: unknown }>): number {
  let n = 0
  for (const m of messages) {
    n += 8
    const c = m.content
    if (typeof c === 'string') n += words(c)
    else if (Array.isArray(c)) for (const p of c) if (typeof p?.text === 'string') n += words(p.text)
  }
  return n
}

export async function startBillingUpstream(
  opts: {
    answerTokens?: number
    /** The answer's length for a model of this name (the body's `model`), in place of `answerTokens`. */
    answerFor?: (model: string) => number | undefined
    defaultMax?: number
    /** The pause after each content chunk, in ms (none by default). */
    chunkDelayMs?: number
    /**
     * Tokens a streamed content chunk carries (10 by default): a long answer in fewer, larger
     * events costs the gateway fewer frames to relay and count.
     */
    chunkTokens?: number
    /**
     * A fault for this request of `model` (`n`: its 0-based count of that model): `cut` ends a
     * stream after that many tokens (billed for them, no usage chunk), `refuse` answers 400,
     * `error200` answers 200 with that `{"error": …}` body (a compatible server's error in disguise),
     * `json200` answers 200 with that body as it is (a malformed completion).
     */
    fault?: (
      model: string,
      n: number,
    ) => { cut?: number; refuse?: boolean; error200?: Record<string, unknown>; json200?: unknown } | undefined
    /**
     * Awaited by a stream after its first content chunk: a test holds the request in flight (its
     * reservation held) until the promise it returns resolves.
     */
    gate?: () => Promise<void>
    /** Answer `answerTokens` per choice whatever cap the request sent. */
    ignoreCap?: boolean
    /** A model's hidden reasoning a choice (the body's `model`), within the cap, billed, never sent. */
    reasoningFor?: (model: string) => number | undefined
    /**
     * Always answer `application/json`, whatever `stream` says (a plain OpenAI-compatible server
     * without streaming), after `jsonDelayMs` (none by default).
     */
    jsonOnly?: boolean
    jsonDelayMs?: number
    /** false: no usage in any answer (a compatible server that never reports it). */
    usage?: boolean
    /** The word each token is (`w`: 2 bytes with its space; `hello`: 6, one o200k token). */
    word?: string
    /** The answer's words in turn, cycled (a sentence of another script), in place of `word`. */
    words?: string[]
    /**
     * The tokens the upstream bills for a choice's text, in place of one a word (a real
     * tokenizer's count: gpt-tokenizer's `cl100k_base` for GPT-4). The cap still counts words:
     * meant with `ignoreCap`.
     */
    tokensOf?: (text: string) => number
  } = {},
): Promise<BillingUpstream> {
  const defaultAnswer = opts.answerTokens ?? 150
  const word = `${opts.word ?? 'w'} `
  const words = opts.words?.map((w) => `${w} `)
  /** Words `from` to `from + count` of the answer, each with its space. */
  const wordsAt = (from: number, count: number): string => {
    if (!words) return word.repeat(count)
    let s = ''
    for (let i = from; i < from + count; i++) s += words[i % words.length]
    return s
  }
  /** What a choice of `text` is billed: its tokens, or a token a word (`count`). */
  const billOf = (text: string, count: number) => (opts.tokensOf ? opts.tokensOf(text) : count)
  const defaultMax = opts.defaultMax ?? 4096
  const chunkTokens = opts.chunkTokens ?? 10
  const billed = { tokens: 0, input: 0, output: 0, requests: 0 }
  const caps: Array<number | null> = []
  const byModel: BillingUpstream['byModel'] = {}
  const seen: BillingUpstream['seen'] = []
  const counts: Record<string, number> = {}
  let model = ''
  const bills: BillingUpstream['bills'] = []
  let current = { cap: null as number | null, n: 1, stream: false }
  const bill = (input: number, output: number, m = model, at = current) => {
    bills.push({ ...at, input, output })
    byModel[m] ??= { input: 0, output: 0 }
    const b = byModel[m]
    b.input += input
    b.output += output
    billed.input += input
    billed.output += output
    billed.tokens += input + output
  }
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const url = new URL(req.url)
      if (req.method !== 'POST' || url.pathname !== '/v1/chat/completions')
        return Response.json({ error: { message: 'not found' } }, { status: 404 })
      const body = (await req.json()) as Record<string, any>
      if (body.max_tokens != null && body.max_completion_tokens != null) {
        return Response.json(
          {
            error: {
              message: 'max_tokens and max_completion_tokens cannot both be set',
              type: 'invalid_request_error',
              param: 'max_tokens',
              code: 'invalid_request_error',
            },
          },
          { status: 400 },
        )
      }
      model = String(body.model)
      const m = model
      const answerTokens = opts.answerFor?.(m) ?? defaultAnswer
      const messages = (body.messages ?? []) as Array<{ role?: string; content?: unknown }>
      const last = messages.at(-1)
      seen.push({ model: m, prefill: last?.role === 'assistant' ? String(last.content) : null })
      counts[m] = (counts[m] ?? -1) + 1
      const fault = opts.fault?.(m, counts[m])
      if (fault?.refuse)
        return Response.json({ error: { message: 'no', type: 'invalid_request_error' } }, { status: 400 })
      if (fault?.error200) return Response.json({ error: fault.error200 })
      if (fault?.json200 !== undefined) return Response.json(fault.json200)
      const cap = body.max_completion_tokens ?? body.max_tokens ?? null
      caps.push(cap)
      const input = inputTokens(body.messages ?? [])
      const limit = opts.ignoreCap ? Number.POSITIVE_INFINITY : (cap ?? defaultMax)
      // A choice's hidden reasoning first, then its visible answer in what the cap leaves.
      const reasoning = opts.reasoningFor?.(m)
      const reason = Math.min(limit, reasoning ?? 0)
      const perChoice = Math.min(limit - reason, answerTokens)
      const n = typeof body.n === 'number' ? body.n : 1
      const at = { cap, n, stream: body.stream === true }
      current = at
      const hidden = n * reason
      const answer = wordsAt(0, perChoice).trimEnd()
      const output = n * billOf(answer, perChoice) + hidden
      const usage = {
        prompt_tokens: input,
        completion_tokens: output,
        total_tokens: input + output,
        ...(reasoning !== undefined ? { completion_tokens_details: { reasoning_tokens: hidden } } : {}),
      }
      const reports = opts.usage !== false
      const id = `chatcmpl-${billed.requests}`
      billed.requests++
      const base = { id, created: 1_700_000_000, model: body.model }
      if (!body.stream || opts.jsonOnly) {
        if (opts.jsonDelayMs) await Bun.sleep(opts.jsonDelayMs)
        bill(input, output, m, at)
        return Response.json({
          ...base,
          object: 'chat.completion',
          choices: Array.from({ length: n }, (_, index) => ({
            index,
            message: { role: 'assistant', content: answer, refusal: null },
            finish_reason: perChoice < answerTokens ? 'length' : 'stop',
            logprobs: null,
          })),
          ...(reports ? { usage } : {}),
        })
      }
      const withUsage = reports && body.stream_options?.include_usage === true
      const enc = new TextEncoder()
      const frame = (o: unknown) => enc.encode(`data: ${JSON.stringify(o)}\n\n`)
      const chunk = (delta: Record<string, unknown>, finish: string | null, index = 0) => ({
        ...base,
        object: 'chat.completion.chunk',
        choices: [{ index, delta, finish_reason: finish, logprobs: null }],
        ...(withUsage ? { usage: null } : {}),
      })
      // The reasoning was generated (and is billed) before the first visible token.
      let generated = hidden
      /** Each choice's text sent so far (all choices alike). */
      let sent = ''
      let done = false
      const stream = new ReadableStream<Uint8Array>({
        async start(c) {
          try {
            for (let k = 0; k < n; k++) c.enqueue(frame(chunk({ role: 'assistant', content: '' }, null, k)))
            const end = fault?.cut !== undefined ? Math.min(fault.cut, perChoice) : perChoice
            for (let i = 0; i < end; i += chunkTokens) {
              const step = Math.min(chunkTokens, end - i)
              // Each choice's next chunkTokens tokens, billed as they are generated.
              // The answer's last chunk ends at its last word, as the JSON answer does (and as a
              // byte-pair model's text ends: no trailing space, which would be a token of its own).
              const text = i + step >= perChoice ? wordsAt(i, step).trimEnd() : wordsAt(i, step)
              const before = billOf(sent, i)
              sent += text
              for (let k = 0; k < n; k++) {
                if (done) return
                c.enqueue(frame(chunk({ content: text }, null, k)))
                generated += billOf(sent, i + step) - before
              }
              if (i === 0 && opts.gate) await opts.gate()
              if (opts.chunkDelayMs) await Bun.sleep(opts.chunkDelayMs)
            }
            if (fault?.cut !== undefined) {
              done = true
              bill(input, generated, m, at)
              // Time for Bun to write the enqueued frames before the abort: at 20 ms a starved
              // process lost them (output-continuation failed 3 of 5 runs under load; 0 of 5 at
              // 100 ms, as fault-upstream.ts's cut).
              await Bun.sleep(100)
              c.error(new Error('cut'))
              return
            }
            for (let k = 0; k < n; k++)
              c.enqueue(frame(chunk({}, perChoice < answerTokens ? 'length' : 'stop', k)))
            if (withUsage) c.enqueue(frame({ ...base, object: 'chat.completion.chunk', choices: [], usage }))
            c.enqueue(enc.encode('data: [DONE]\n\n'))
            c.close()
            done = true
            bill(input, output, m, at)
          } catch {
            // The client left: billed for the input and what was generated.
            if (!done) {
              done = true
              bill(input, generated, m, at)
            }
          }
        },
        cancel() {
          if (!done) {
            done = true
            bill(input, generated, m, at)
          }
        },
      })
      return new Response(stream, { headers: { 'content-type': 'text/event-stream; charset=utf-8' } })
    },
  })
  return {
    url: `http://127.0.0.1:${server.port}/v1`,
    billed,
    bills,
    caps,
    byModel,
    seen,
    stop: async () => {
      await server.stop(true)
    },
  }
}
