/**
 * @module
 * What hostile input costs the gateway, in-process (issue 9, findings 2 and 3): reading a 10 MB
 * request body of `[` (refused by the structural limits while it is read) against a valid 10 MB
 * body (read, parsed and validated), and parsing one 50 MB SSE `data:` line that arrives in 64 KiB
 * chunks (linear: it was 5.6–33 s when the parser rescanned the pending line); and count_tokens'
 * estimate of 64 K characters without a space against the same characters as words (a run is one
 * pre-tokenizer piece, superlinear whole: 5 s of letters, 40 s of CJK before limits/o200k.ts).
 */

import { parseJsonObject } from '../../src/json/parse-json-body.ts'
import { readBodyText } from '../../src/pipeline/body.ts'
import { parseSSE } from '../../src/providers/sse/index.ts'
import { CHAT_EXAMPLE, validateChatRequest } from '../../src/surfaces/chat/validate.ts'
import { estimateTokens } from '../../src/surfaces/messages/count-tokens.ts'
import { type Series, series } from './report.ts'

export interface HostileInputResult {
  /** ms per 10 MB body, from the first byte to the 400. */
  bracketMs: Series
  /** ms per valid 10 MB body, read + parse + validate. */
  validMs: Series
  /** ms to parse one 50 MB line (cap raised so it parses whole). */
  sseLineMs: Series
  /** ms per count_tokens estimate of 64 K characters: a run without a space, and as words. */
  countTokens: Record<'letters' | 'cjk', { run: Series; words: Series }>
}

const MB = 1024 * 1024
const CHUNK = 64 * 1024

/**
 * `bytes` as a request body arriving in 64 KiB chunks, as from a socket: each a fresh copy (a
 * socket's reads are), since the body's reader may take the buffer it is given — a view of `bytes`
 * left it empty for every later run (the second run read an empty body and the bench stopped).
 */
function request(bytes: Uint8Array): Request {
  let at = 0
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      if (at >= bytes.length) return c.close()
      c.enqueue(bytes.slice(at, at + CHUNK))
      at += CHUNK
    },
  })
  return new Request('http://bench/v1/chat/completions', { method: 'POST', body })
}

/** `samples` timed runs after one untimed (JIT warm-up). */
async function timed(samples: number, op: () => Promise<unknown>): Promise<Series> {
  await op()
  const ms: number[] = []
  for (let i = 0; i < samples; i++) {
    const t0 = performance.now()
    await op()
    ms.push(performance.now() - t0)
  }
  return series(ms)
}

export async function runHostileInput(samples: number): Promise<HostileInputResult> {
  const bracket = new Uint8Array(10 * MB).fill(0x5b)
  const valid = new TextEncoder().encode(
    JSON.stringify({ model: 'mock/bench', messages: [{ role: 'user', content: 'a'.repeat(10 * MB - 80) }] }),
  )
  const limit = 11 * MB
  const bracketMs = await timed(samples, async () => {
    const refused = await readBodyText(request(bracket), limit, 60_000).then(
      () => false,
      () => true,
    )
    if (!refused) throw new Error('10 MB of "[" was not refused')
  })
  const validMs = await timed(samples, async () => {
    validateChatRequest(parseJsonObject(await readBodyText(request(valid), limit, 60_000), CHAT_EXAMPLE))
  })
  const line = new Uint8Array(CHUNK).fill(0x78)
  const sseLineMs = await timed(Math.max(1, Math.ceil(samples / 3)), async () => {
    let sent = -1
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent < 0) {
          c.enqueue(new TextEncoder().encode('data: '))
          sent = 0
        } else if (sent >= 50 * MB) {
          c.enqueue(new TextEncoder().encode('\n\n'))
          c.close()
        } else {
          c.enqueue(line)
          sent += CHUNK
        }
      },
    })
    const reader = parseSSE(body, { maxEventBytes: 64 * MB, label: 'bench' }).getReader()
    while (!(await reader.read()).done) {}
  })
  const countTokens = {
    letters: await countTokensPair(samples, [...'abcdefghijklmnopqrstuvwxyz']),
    cjk: await countTokensPair(
      samples,
      Array.from({ length: 3000 }, (_, i) => String.fromCharCode(0x4e00 + i)),
    ),
  }
  return { bracketMs, validMs, sseLineMs, countTokens }
}

const COUNTED_CHARS = 65_536

/**
 * count_tokens' estimate (in-process) of 64 K characters drawn from `alphabet`: as one run without a
 * space, and as words of 1–8 characters. A new text each time, so no sample finds the last one's
 * pieces in the encoder's cache.
 */
async function countTokensPair(samples: number, alphabet: string[]): Promise<{ run: Series; words: Series }> {
  // xorshift32: a linear congruential generator's low bits repeat, and repeated words hit the cache.
  let state = 0x9e3779b9
  const next = (n: number) => {
    state ^= state << 13
    state ^= state >>> 17
    state ^= state << 5
    return (state >>> 0) % n
  }
  const text = (spaced: boolean) => {
    const out: string[] = []
    for (let i = 0, word = 0; i < COUNTED_CHARS; i++) {
      if (spaced && word-- === 0) {
        out.push(' ')
        word = 1 + next(8)
      } else out.push(alphabet[next(alphabet.length)]!)
    }
    return out.join('')
  }
  const timedCount = (spaced: boolean) => {
    const texts = Array.from({ length: samples + 1 }, () => text(spaced))
    return timed(samples, () =>
      estimateTokens({ model: 'x/y', messages: [{ role: 'user', content: texts.pop()! }] } as never),
    )
  }
  return { run: await timedCount(false), words: await timedCount(true) }
}
