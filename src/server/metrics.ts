/**
 * @module
 * Process-local Prometheus counters. Cheap on the hot path: a Map increment per request.
 */

export class Metrics {
  private readonly requests = new Map<string, number>()
  private readonly upstream = new Map<string, number>()
  private readonly rejected = new Map<string, number>()
  openStreams = 0
  private readonly started = Date.now()

  request(route: string, status: number): void {
    const k = `route="${route}",status="${status}"`
    this.requests.set(k, (this.requests.get(k) ?? 0) + 1)
  }

  upstreamResult(model: string, outcome: string): void {
    const k = `model="${model}",outcome="${outcome}"`
    this.upstream.set(k, (this.upstream.get(k) ?? 0) + 1)
  }

  limitRejected(window: string): void {
    const k = `window="${window}"`
    this.rejected.set(k, (this.rejected.get(k) ?? 0) + 1)
  }

  render(): string {
    const lines: string[] = []
    const family = (name: string, help: string, type: string, m: Map<string, number>) => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`)
      for (const [labels, v] of m) lines.push(`${name}{${labels}} ${v}`)
    }
    family('switchyard_http_requests_total', 'HTTP responses by route and status.', 'counter', this.requests)
    family(
      'switchyard_upstream_requests_total',
      'Upstream calls by model and outcome.',
      'counter',
      this.upstream,
    )
    family('switchyard_rate_limited_total', 'Requests refused for a rate limit.', 'counter', this.rejected)
    lines.push(
      '# HELP switchyard_open_streams Streams being relayed now.',
      '# TYPE switchyard_open_streams gauge',
    )
    lines.push(`switchyard_open_streams ${this.openStreams}`)
    lines.push(
      '# HELP switchyard_uptime_seconds Seconds since start.',
      '# TYPE switchyard_uptime_seconds gauge',
    )
    lines.push(`switchyard_uptime_seconds ${Math.floor((Date.now() - this.started) / 1000)}`)
    const mem = process.memoryUsage()
    lines.push(
      '# HELP switchyard_resident_memory_bytes RSS.',
      '# TYPE switchyard_resident_memory_bytes gauge',
    )
    lines.push(`switchyard_resident_memory_bytes ${mem.rss}`)
    return `${lines.join('\n')}\n`
  }
}
