/**
 * @module
 * A local OpenAI Chat Completions upstream whose streams wait at a gate the test opens: a stream
 * sends its first half, then holds (the response open, in flight) until `open()`; a plain request
 * answers at once. For tests that change something (a live reload) while a stream is in flight.
 * Every stream answers `FIRST + SECOND` whole once the gate opens; a model whose name starts with
 * `fail` answers 500. Calls are counted by model.
 *
 * @example
 * const up = await startGatedUpstream()
 * // provider config: { kind: 'openai', base_url: `${up.url}/v1`, api_key: 'k', models: [...] }
 * const open = up.hold() // streams started from now wait ...
 * open() // ... until here
 */
export const FIRST = 'first half, '
export const SECOND = 'second half.'

export interface GatedUpstream {
  url: string
  /** Streams begun from now on hold after their first half until the returned function is called. */
  hold(): () => void
  /** Streams that have sent their first half and are waiting at the gate. */
  readonly waiting: number
  /** Requests received for `model` (the upstream's name). */
  calls(model: string): number
  stop(): Promise<void>
}

export async function startGatedUpstream(): Promise<GatedUpstream> {
  let gate: Promise<void> = Promise.resolve()
  let waiting = 0
  const calls = new Map<string, number>()
  const enc = new TextEncoder()
  const frame = (model: string, choices: unknown[], usage?: unknown) =>
    enc.encode(
      `data: ${JSON.stringify({ id: 'chatcmpl-gated', object: 'chat.completion.chunk', created: 1, model, choices, ...(usage ? { usage } : {}) })}\n\n`,
    )
  const delta = (content: string, finish: string | null = null) => ({
    index: 0,
    delta: finish ? {} : { role: 'assistant', content },
    finish_reason: finish,
  })
  const usage = { prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 }
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    // Held streams are idle until the test opens the gate: Bun's default (10 s) would end them
    // on a loaded machine, and the gateway's open streams with them (a CI run saw it).
    idleTimeout: 0,
    async fetch(request) {
      const body = (await request.json()) as { model: string; stream?: boolean }
      const model = body.model
      calls.set(model, (calls.get(model) ?? 0) + 1)
      if (model.startsWith('fail')) {
        return Response.json({ error: { message: 'down', type: 'server_error' } }, { status: 500 })
      }
      if (!body.stream) {
        return Response.json({
          id: 'chatcmpl-gated',
          object: 'chat.completion',
          created: 1,
          model,
          choices: [
            { index: 0, message: { role: 'assistant', content: `${FIRST}${SECOND}` }, finish_reason: 'stop' },
          ],
          usage,
        })
      }
      const held = gate
      const stream = new ReadableStream<Uint8Array>({
        async start(c) {
          c.enqueue(frame(model, [delta(FIRST)]))
          waiting++
          await held
          waiting--
          c.enqueue(frame(model, [delta(SECOND)]))
          c.enqueue(frame(model, [delta('', 'stop')]))
          c.enqueue(frame(model, [], usage))
          c.enqueue(enc.encode('data: [DONE]\n\n'))
          c.close()
        },
      })
      return new Response(stream, { headers: { 'content-type': 'text/event-stream' } })
    },
  })
  return {
    url: `http://127.0.0.1:${server.port}`,
    hold() {
      let open!: () => void
      gate = new Promise((r) => {
        open = r
      })
      return open
    },
    get waiting() {
      return waiting
    },
    calls: (model) => calls.get(model) ?? 0,
    stop: () => server.stop(true),
  }
}

/** The text of an OpenAI chat stream, read to its end: what a client shows. */
export async function streamText(res: Response): Promise<{ text: string; done: boolean }> {
  let text = ''
  let done = false
  const raw = await res.text()
  for (const line of raw.split('\n')) {
    if (!line.startsWith('data: ')) continue
    const data = line.slice(6)
    if (data === '[DONE]') {
      done = true
      continue
    }
    const chunk = JSON.parse(data) as { choices?: Array<{ delta?: { content?: string } }> }
    text += chunk.choices?.[0]?.delta?.content ?? ''
  }
  return { text, done }
}
