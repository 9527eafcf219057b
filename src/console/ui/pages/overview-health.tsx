/**
 * @module
 * Provider and model health on the overview (DESIGN §15): per provider, its requests, upstream
 * errors by code, the client's own mistakes apart (4xx it caused, 499 when it left: no provider's
 * error), the gateway's own failures apart (its bugs, its database down: no provider's either)
 * and the fallbacks taken from its models (the request log, newest requests of 24 h); per model,
 * upstream attempts and failures by kind, whose each is; every circuit's state per (provider, key #,
 * model) — the last two from the figures `/metrics` serves, since this server started. And the
 * refusals of every code before admission (24 h).
 */
import { num, shortWhen, when } from '../format.ts'
import { Panel, Table } from '../parts.tsx'

const pct = (r: number) => `${Math.round(r * 1000) / 10} %`

export function ProviderHealth({ health }: { health: any }) {
  return (
    <Panel id="health" title="Provider health" wide>
      <p class="muted">
        Upstream errors in the last {health?.hours ?? 24} h
        {health && !health.complete
          ? ` (the newest ${num(health.scanned)} requests, from ${when(health.from)})`
          : ''}
        ; the client's own 4xx and 499s, and the gateway's own failures, are apart: not the provider's.
      </p>
      <Table
        compact
        testid="provider-health"
        cols={[
          'provider',
          'requests',
          'upstream errors',
          'rate',
          'by code',
          'client 4xx',
          'gateway’s',
          'fallbacks',
          'last',
        ]}
        num={['requests', 'upstream errors', 'rate', 'client 4xx', 'gateway’s', 'fallbacks']}
      >
        {(health?.data ?? []).map((p: any) => (
          <tr data-provider={p.provider}>
            <td>{p.provider}</td>
            <td class="num">{num(p.requests)}</td>
            <td class="num">
              <span class={p.upstream_errors ? 'badge bad' : undefined}>{num(p.upstream_errors)}</span>
            </td>
            <td class="num" data-col="rate">
              {pct(p.error_rate)}
            </td>
            <td>
              <span class="chips">
                {p.errors_by_code.map((c: any) => (
                  <span class="chip" title={`last ${when(c.last_at)}`}>
                    {c.status ?? '—'} {c.code} × {num(c.count)}
                  </span>
                ))}
              </span>
            </td>
            <td class="num" data-col="client">
              {num(p.client_errors)}
            </td>
            <td class="num" data-col="gateway">
              <span class={p.gateway_errors ? 'badge bad' : undefined}>{num(p.gateway_errors)}</span>
            </td>
            <td class="num">{num(p.fallbacks)}</td>
            <td title={when(p.last_error_at)}>{shortWhen(p.last_error_at)}</td>
          </tr>
        ))}
      </Table>
    </Panel>
  )
}

const STATE_CLASS: Record<string, string> = { open: 'bad', half_open: 'warn', closed: 'ok' }

export function ModelHealth({ upstreams }: { upstreams: any }) {
  const circuits: any[] = upstreams?.circuits ?? []
  const open = circuits.filter((c) => c.state !== 'closed').length
  return (
    <>
      <Panel id="attempts" title="Upstream attempts by model">
        <p class="muted">
          Since this server started; retries and fallbacks each count. Refused for the request's own fault (a
          bad parameter, too long a context, content policy): the client's, apart. Failed by the gateway's own
          code (kind internal: a bug to report with its logged stack): the gateway's, apart.
        </p>
        <Table
          compact
          testid="model-attempts"
          cols={['model', 'attempts', 'failed', 'client’s', 'gateway’s', 'by kind']}
          num={['attempts', 'failed', 'client’s', 'gateway’s']}
        >
          {(upstreams?.models ?? []).map((m: any) => (
            <tr data-model={`${m.provider}/${m.model}`}>
              <td>
                {m.provider}/{m.model}
              </td>
              <td class="num">{num(m.attempts)}</td>
              <td class="num">
                <span class={m.failed ? 'badge bad' : undefined}>{num(m.failed)}</span>
              </td>
              <td class="num">{num(m.client_faults)}</td>
              <td class="num" data-col="gateway">
                <span class={m.gateway_faults ? 'badge bad' : undefined}>{num(m.gateway_faults)}</span>
              </td>
              <td>
                <span class="chips">
                  {Object.entries(m.failures).map(([kind, n]) => (
                    <span class="chip">
                      {kind} × {num(n as number)}
                    </span>
                  ))}
                </span>
              </td>
            </tr>
          ))}
        </Table>
        {upstreams && !upstreams.models.length && <p class="muted">No upstream called yet.</p>}
      </Panel>
      <Panel id="circuits" title="Circuits">
        <p class="muted">
          {open ? `${open} not closed. ` : ''}Per provider, key # and model; an open one is skipped until its
          cooldown ends.
        </p>
        <Table compact testid="circuits" cols={['provider', 'key', 'upstream model', 'state']}>
          {circuits.map((c) => (
            <tr data-circuit={`${c.provider} ${c.key} ${c.model}`} data-state={c.state}>
              <td>{c.provider}</td>
              <td>{c.key}</td>
              <td>{c.model}</td>
              <td>
                <span class={`badge ${STATE_CLASS[c.state] ?? ''}`}>{c.state.replace('_', '-')}</span>
              </td>
            </tr>
          ))}
        </Table>
        {upstreams && !circuits.length && <p class="muted">No circuit used yet.</p>}
      </Panel>
    </>
  )
}

/** Every refusal before admission in 24 h, by status and code (402, 403, 429, 400 …). */
export function RefusalCodes({ refusals }: { refusals: any }) {
  const by = new Map<string, { status: number; code: string; count: number }>()
  for (const t of refusals?.totals ?? []) {
    const id = `${t.status} ${t.code}`
    const r = by.get(id) ?? { status: t.status, code: t.code, count: 0 }
    r.count += t.count
    by.set(id, r)
  }
  const rows = [...by.values()].sort((a, b) => b.count - a.count || a.status - b.status)
  return (
    <Panel id="refusals-codes" title="Refusals, last 24 h">
      <p class="muted">Refused before admission, every code; per key on the keys page.</p>
      <Table compact testid="refusal-codes" cols={['status', 'code', 'count']} num={['count']}>
        {rows.map((r) => (
          <tr data-code={r.code}>
            <td>{r.status}</td>
            <td>{r.code}</td>
            <td class="num">{num(r.count)}</td>
          </tr>
        ))}
      </Table>
      {refusals && !rows.length && <p class="muted">Nothing refused.</p>}
    </Panel>
  )
}

export const refusedTotal = (refusals: any): number =>
  (refusals?.totals ?? []).reduce((s: number, t: any) => s + t.count, 0)
