/**
 * @module
 * The Redis limiter's one connection: made on demand, never queued behind an outage (a request
 * must fail now, not wait for Redis), every command bounded by COMMAND_TIMEOUT_MS, and an outage
 * logged once when it starts and once when it ends.
 */
import { RedisClient } from 'bun'

/** A command that takes longer than this counts as Redis being unreachable. */
export const COMMAND_TIMEOUT_MS = 2000
const CONNECT_TIMEOUT_MS = 1000

/** A Lua script and its SHA-1, by which the server caches it. */
export interface Script {
  source: string
  sha: string
}

export const script = (source: string): Script => ({
  source,
  sha: new Bun.CryptoHasher('sha1').update(source).digest('hex'),
})

export interface ConnectionOptions {
  url: string
  onUnavailable: 'reject' | 'allow'
  warn(message: string, fields?: Record<string, unknown>): void
}

export class RedisConnection {
  private client: RedisClient | null = null
  private connecting: Promise<RedisClient> | null = null
  private down = false

  constructor(private readonly opts: ConnectionOptions) {}

  async connected(): Promise<RedisClient> {
    if (this.client?.connected) return this.client
    this.connecting ??= (async () => {
      this.client?.close()
      this.client = null
      // No offline queue: while Redis is down a request must fail now, not wait for it.
      const c = new RedisClient(this.opts.url, {
        enableOfflineQueue: false,
        autoReconnect: false,
        connectionTimeout: CONNECT_TIMEOUT_MS,
      })
      try {
        await withTimeout(c.connect())
      } catch (err) {
        c.close()
        throw err
      }
      this.client = c
      return c
    })().finally(() => {
      this.connecting = null
    })
    return this.connecting
  }

  /**
   * Runs `s` by its SHA, sending the script itself once when the server's cache lacks it (a
   * restarted server has an empty one). A transport failure drops the connection, so the next
   * call connects afresh; the script's own error keeps it.
   */
  eval(client: RedisClient, s: Script, args: string[]): Promise<unknown> {
    return withTimeout(
      client.send('EVALSHA', [s.sha, ...args]).catch((err: Error) => {
        if (/NOSCRIPT/.test(String(err?.message))) return client.send('EVAL', [s.source, ...args])
        throw err
      }),
    ).catch((err) => {
      if ((err as { code?: string })?.code !== 'ERR_REDIS_SERVER_ERROR') this.drop(client)
      throw err
    })
  }

  /** Redis's clock, ms since the epoch. */
  async serverNow(client: RedisClient): Promise<number> {
    const [s, us] = (await client.send('TIME', [])) as [string, string]
    return Number(s) * 1000 + Math.floor(Number(us) / 1000)
  }

  /** An admission went through: an outage noted before is over. */
  reachable(): void {
    if (!this.down) return
    this.down = false
    this.opts.warn('redis limiter reachable again')
  }

  noteDown(err: unknown): void {
    if (this.down) return
    this.down = true
    // Once per outage; `reachable` logs when it is over.
    const doing =
      this.opts.onUnavailable === 'reject'
        ? 'refusing requests with 503 limiter_unavailable'
        : 'serving without limits (limits.on_unavailable: allow)'
    this.opts.warn(`redis limiter unreachable; ${doing}`, { error: (err as Error)?.message ?? String(err) })
  }

  close(): void {
    this.client?.close()
    this.client = null
  }

  private drop(client: RedisClient): void {
    if (this.client === client) this.client = null
    client.close()
  }
}

export function withTimeout<T>(p: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`redis did not answer within ${COMMAND_TIMEOUT_MS} ms`)),
      COMMAND_TIMEOUT_MS,
    )
  })
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer))
}
