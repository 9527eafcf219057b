/**
 * @module
 * The overview's tables: today's busiest keys and accounts (UTC day) and each provider's upstream
 * errors (the newest requests of the last 24 h), from the admin API's overview endpoints, read
 * again every 30 s while the page is open.
 */
import { useEffect } from 'preact/hooks'
import { api } from '../api.ts'
import { num, shortWhen, when } from '../format.ts'
import { ErrorNotice, TableHead } from '../parts.tsx'
import { useLoad } from './hooks.ts'

const REFRESH_MS = 30_000
const pct = (r: number) => `${Math.round(r * 1000) / 10} %`

export function OverviewPanels() {
  const { data, error, reload } = useLoad(
    () =>
      Promise.all([
        api('GET', '/admin/v1/overview/top?by=key&limit=5'),
        api('GET', '/admin/v1/overview/top?by=account&limit=5'),
        api('GET', '/admin/v1/overview/providers'),
      ]),
    [],
  )
  useEffect(() => {
    const t = setInterval(reload, REFRESH_MS)
    return () => clearInterval(t)
  }, [reload])
  const [keys, accounts, health] = data ?? [null, null, null]
  return (
    <div class="panels">
      <ErrorNotice error={error} />
      <section aria-labelledby="h-health" class="panel wide">
        <h2 id="h-health">Provider health</h2>
        <p class="muted">
          Upstream errors in the last {health?.hours ?? 24} h
          {health && !health.complete
            ? ` (the newest ${num(health.scanned)} requests, from ${when(health.from)})`
            : ''}
          .
        </p>
        <div class="table-wrap">
          <table class="compact" data-testid="provider-health">
            <TableHead
              cols={['provider', 'requests', 'upstream errors', 'rate', 'by code', 'last']}
              num={['requests', 'upstream errors', 'rate']}
            />
            <tbody>
              {(health?.data ?? []).map((p: any) => (
                <tr data-provider={p.provider}>
                  <td>{p.provider}</td>
                  <td class="num">{num(p.requests)}</td>
                  <td class="num">
                    <span class={p.upstream_errors ? 'badge bad' : undefined}>{num(p.upstream_errors)}</span>
                  </td>
                  <td class="num">{pct(p.error_rate)}</td>
                  <td>
                    <span class="chips">
                      {p.errors_by_code.map((c: any) => (
                        <span class="chip" title={`last ${when(c.last_at)}`}>
                          {c.status ?? '—'} {c.code} × {num(c.count)}
                        </span>
                      ))}
                    </span>
                  </td>
                  <td title={when(p.last_error_at)}>{shortWhen(p.last_error_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
      <section aria-labelledby="h-top-keys" class="panel">
        <h2 id="h-top-keys">Top keys today</h2>
        <div class="table-wrap">
          <table class="compact" data-testid="top-keys">
            <TableHead
              cols={['key', 'account', 'requests', 'tokens', 'errors', '429s']}
              num={['requests', 'tokens', 'errors', '429s']}
            />
            <tbody>
              {(keys?.data ?? []).map((k: any) => (
                <tr data-key={k.key_id}>
                  <td>
                    <span class="clip" title={k.key_id}>
                      {k.key_name ?? k.key_id}
                    </span>
                  </td>
                  <td>{k.account ?? '—'}</td>
                  <td class="num">{num(k.requests)}</td>
                  <td class="num">{num(k.total_tokens)}</td>
                  <td class="num">{num(k.errors)}</td>
                  <td class="num">{num(k.rate_limited)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        {keys && !keys.data.length && <p class="muted">No requests today yet.</p>}
      </section>
      <section aria-labelledby="h-top-accounts" class="panel">
        <h2 id="h-top-accounts">Top accounts today</h2>
        <div class="table-wrap">
          <table class="compact" data-testid="top-accounts">
            <TableHead
              cols={['account', 'requests', 'tokens', 'errors', '429s']}
              num={['requests', 'tokens', 'errors', '429s']}
            />
            <tbody>
              {(accounts?.data ?? []).map((a: any) => (
                <tr data-account={a.account}>
                  <td>{a.account ?? '—'}</td>
                  <td class="num">{num(a.requests)}</td>
                  <td class="num">{num(a.total_tokens)}</td>
                  <td class="num">{num(a.errors)}</td>
                  <td class="num">{num(a.rate_limited)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
    </div>
  )
}
