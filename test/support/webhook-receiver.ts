/**
 * @module
 * A webhook receiver (Bun.serve on 127.0.0.1, port 0) that keeps every delivery it got and
 * answers as told: `fail` answers 500 to that many deliveries first; `down` answers 503 to all.
 * `verify` is the README's signature recipe, word for word.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'

export interface Received {
  /** The path and query it was sent to, as a full URL. */
  url: string
  event: string
  id: string
  signature: string
  body: string
  doc: any
  answered: number
}

export interface WebhookReceiver {
  url: string
  got: Received[]
  /** Answer 500 to the next `n` deliveries. */
  fail(n: number): void
  down: boolean
  stop(): Promise<void>
}

/** The README's recipe: a receiver's check of `x-switchyard-signature` (five minutes of tolerance). */
export function verify(secret: string, header: string, body: string): boolean {
  const { t, v1 } = Object.fromEntries(header.split(',').map((kv) => kv.split('=')))
  const mac = createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')
  const fresh = Math.abs(Date.now() / 1000 - Number(t)) < 300
  return fresh && v1?.length === mac.length && timingSafeEqual(Buffer.from(v1), Buffer.from(mac))
}

export function startWebhookReceiver(): WebhookReceiver {
  let failing = 0
  const r: WebhookReceiver = {
    url: '',
    got: [],
    fail: (n) => {
      failing = n
    },
    down: false,
    stop: () => server.stop(true),
  }
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const body = await req.text()
      const answered = r.down ? 503 : failing > 0 ? 500 : 200
      if (!r.down && failing > 0) failing--
      const doc = JSON.parse(body)
      // Slack's and Discord's shapes carry no id: the id is in their text.
      r.got.push({
        url: req.url,
        event: String(doc.type ?? ''),
        id: String(doc.id ?? ''),
        signature: req.headers.get('x-switchyard-signature') ?? '',
        body,
        doc,
        answered,
      })
      return new Response(null, { status: answered })
    },
  })
  r.url = `http://127.0.0.1:${server.port}/hook`
  return r
}
