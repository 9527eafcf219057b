/**
 * @module
 * The alert deliveries (DESIGN §15), from `GET /admin/v1/deliveries`, newest first in cursor
 * pages: the event, the webhook's host, the state, tries, the last error and the next try.
 * A webhook's URL is shown as its host only: Slack's and Discord's URLs carry their credential in
 * the path (and some receivers in the query), so neither is ever put on the page.
 */
import { useState } from 'preact/hooks'
import { api, qs } from '../api.ts'
import { num, shortWhen, when } from '../format.ts'
import { ErrorNotice, Page, Pager, Table } from '../parts.tsx'
import { useLoad } from './hooks.ts'

/** The host (and port) of a webhook's URL; never its path, query or user info. */
export function webhookHost(url: string): string {
  try {
    return new URL(url).host
  } catch {
    return '—'
  }
}

/**
 * A delivery's last error with its URL's secret parts taken out, should an error text ever
 * quote the URL (the sender records its own wording, but a transport's message is not ours).
 */
export function safeError(error: string | null, url: string): string {
  if (!error) return ''
  let u: URL
  try {
    u = new URL(url)
  } catch {
    return error
  }
  const secrets = [url, `${u.pathname}${u.search}`, u.pathname, u.search].filter((s) => s.length > 1)
  return secrets.reduce((e, s) => e.split(s).join('…'), error)
}

const STATE_CLASS: Record<string, string> = { delivered: 'ok', pending: 'warn', failed: 'bad' }

export function Alerts() {
  const [cursors, setCursors] = useState<string[]>([''])
  const cursor = cursors[cursors.length - 1]
  const { data, error, reload } = useLoad(
    () => api('GET', `/admin/v1/deliveries${qs({ cursor, limit: 50 })}`),
    [cursor],
  )
  return (
    <Page id="alerts" title="Alerts">
      <ErrorNotice error={error} />
      <Table
        testid="deliveries"
        describedBy="deliveries-help"
        cols={['time', 'event', 'webhook', 'state', 'tries', 'last error', 'next try']}
        num={['tries']}
      >
        {(data?.data ?? []).map((d: any) => (
          <tr data-delivery={d.id} data-state={d.state}>
            <td title={when(d.created_at)}>{shortWhen(d.created_at)}</td>
            <td>
              <code>{d.event}</code>
            </td>
            <td data-col="host">{webhookHost(d.url)}</td>
            <td>
              <span class={`badge ${STATE_CLASS[d.state] ?? 'warn'}`}>{d.state}</span>
            </td>
            <td class="num" data-col="tries">
              {num(d.attempts)}
            </td>
            <td data-col="error">{safeError(d.last_error, d.url)}</td>
            <td data-col="next" title={d.next_attempt_at ? when(d.next_attempt_at) : undefined}>
              {d.next_attempt_at ? shortWhen(d.next_attempt_at) : '—'}
            </td>
          </tr>
        ))}
      </Table>
      <p id="deliveries-help" class="muted">
        Each webhook's deliveries of each event, newest first; a delivery is retried with backoff until its
        webhook answers 2xx. Webhooks are shown by host only (their URLs are credentials).
        {data && !data.data.length && ' No alerts sent yet.'}
      </p>
      <Pager cursors={cursors} setCursors={setCursors} next={data?.next_cursor} onRefresh={reload} />
    </Page>
  )
}
