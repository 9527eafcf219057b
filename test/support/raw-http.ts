/**
 * Sends exact bytes over TCP and reads one HTTP/1.x response: for what `fetch` cannot send
 * (a bad or missing Host, HTTP/1.0, a malformed request line).
 */
import { connect } from 'node:net'

export interface RawResponse {
  /** 0 when the server closed without answering. */
  status: number
  headers: Record<string, string>
  body: string
}

/** Writes `bytes`, reads until the server closes (send `Connection: close`) or `timeoutMs`. */
export function rawRequest(
  port: number,
  bytes: string | Uint8Array,
  timeoutMs = 5_000,
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes))
    const timer = setTimeout(() => socket.destroy(), timeoutMs)
    socket.on('data', (d: Buffer) => chunks.push(d))
    socket.on('error', (e) => {
      clearTimeout(timer)
      if (chunks.length) resolve(parseResponse(Buffer.concat(chunks).toString('latin1')))
      else reject(e)
    })
    socket.on('close', () => {
      clearTimeout(timer)
      resolve(parseResponse(Buffer.concat(chunks).toString('latin1')))
    })
  })
}

/**
 * Sends `head`, then `body` pieces as fast as the socket takes them (none once answered), then
 * holds the connection open: for a server that must answer before a body ends. Resolves with the
 * answer and how long it took, or status 0 if none came within `waitMs`.
 */
export function sendAndHold(
  port: number,
  head: string,
  body: Uint8Array[],
  waitMs = 5_000,
): Promise<RawResponse & { ms: number }> {
  return new Promise((resolve) => {
    const started = performance.now()
    const chunks: Buffer[] = []
    const socket = connect(port, '127.0.0.1', async () => {
      socket.write(head)
      for (const piece of body) {
        if (chunks.length || socket.destroyed) return
        if (!socket.write(piece)) await new Promise((r) => socket.once('drain', r))
      }
    })
    let timer: ReturnType<typeof setTimeout> | undefined
    const done = () => {
      clearTimeout(timer)
      socket.destroy()
      resolve({ ...parseResponse(Buffer.concat(chunks).toString('latin1')), ms: performance.now() - started })
    }
    socket.on('data', (d: Buffer) => {
      chunks.push(d)
      clearTimeout(timer)
      // A whole answer ends the wait at once; else give the rest a moment (the head and a short
      // JSON error arrive together or nearly).
      if (whole(Buffer.concat(chunks).toString('latin1'))) done()
      else timer = setTimeout(done, 50)
    })
    socket.on('error', () => {})
    socket.on('close', done)
    timer = setTimeout(done, waitMs)
  })
}

export function parseResponse(text: string): RawResponse {
  const end = text.indexOf('\r\n\r\n')
  if (!text.startsWith('HTTP/') || end < 0) return { status: 0, headers: {}, body: text }
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n')
  const headers: Record<string, string> = {}
  for (const l of lines) {
    const i = l.indexOf(':')
    if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim()
  }
  let body = text.slice(end + 4)
  if (headers['content-length'] !== undefined) body = body.slice(0, Number(headers['content-length']))
  else if (/chunked/i.test(headers['transfer-encoding'] ?? '')) body = unchunk(body)
  return { status: Number(statusLine!.split(' ')[1]), headers, body }
}

/** Whether `text` holds a whole response: its head, and its Content-Length's bytes or a chunked body's last chunk. */
function whole(text: string): boolean {
  const end = text.indexOf('\r\n\r\n')
  if (end < 0) return false
  const head = text.slice(0, end).toLowerCase()
  const length = /\r\ncontent-length:\s*(\d+)/.exec(head)
  if (length) return text.length - end - 4 >= Number(length[1])
  return /\r\ntransfer-encoding:[^\r]*chunked/.test(head) && text.endsWith('\r\n0\r\n\r\n')
}

function unchunk(s: string): string {
  let out = ''
  let i = 0
  for (;;) {
    const eol = s.indexOf('\r\n', i)
    if (eol < 0) return out
    const n = Number.parseInt(s.slice(i, eol), 16)
    if (!n) return out
    out += s.slice(eol + 2, eol + 2 + n)
    i = eol + 2 + n + 2
  }
}
