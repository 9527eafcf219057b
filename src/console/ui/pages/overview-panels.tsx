/**
 * @module
 * The overview's tables: provider and model health with the circuits (`overview-health.tsx`), spend
 * beside budgets (`overview-money.tsx`), refusals by code, today's busiest keys and accounts (UTC
 * day) — from the admin API's overview endpoints, read again every 30 s while the page is open.
 */
import { useEffect } from 'preact/hooks'
import { api } from '../api.ts'
import { num } from '../format.ts'
import { ErrorNotice, KeyCells, Panel, Table } from '../parts.tsx'
import { useLoad } from './hooks.ts'
import { ModelHealth, ProviderHealth, RefusalCodes } from './overview-health.tsx'
import { SpendPanels } from './overview-money.tsx'

const REFRESH_MS = 30_000

/** What the overview's tables and its money and refusal tiles read, again every 30 s. */
export function useOverviewData() {
  const { data, error, reload } = useLoad(
    () =>
      Promise.all([
        api('GET', '/admin/v1/overview/top?by=key&limit=5'),
        api('GET', '/admin/v1/overview/top?by=account&limit=5'),
        api('GET', '/admin/v1/overview/providers'),
        api('GET', '/admin/v1/overview/spend'),
        api('GET', '/admin/v1/overview/upstreams'),
        api('GET', '/admin/v1/refusals'),
      ]),
    [],
  )
  useEffect(() => {
    const t = setInterval(reload, REFRESH_MS)
    return () => clearInterval(t)
  }, [reload])
  const [keys, accounts, health, spend, upstreams, refusals] = data ?? []
  return { keys, accounts, health, spend, upstreams, refusals, error }
}

export function OverviewPanels({ data }: { data: ReturnType<typeof useOverviewData> }) {
  const { keys, accounts, health, spend, upstreams, refusals, error } = data
  return (
    <div class="panels">
      <ErrorNotice error={error} />
      <SpendPanels spend={spend} />
      <ProviderHealth health={health} />
      <ModelHealth upstreams={upstreams} />
      <RefusalCodes refusals={refusals} />
      <Panel id="top-keys" title="Top keys today">
        <Table compact testid="top-keys" cols={['key', 'account', ...TODAY_COLS]} num={TODAY_COLS}>
          {(keys?.data ?? []).map((k: any) => (
            <tr data-key={k.key_id}>
              <KeyCells k={k} />
              <TodayCells t={k} />
            </tr>
          ))}
        </Table>
        {keys && !keys.data.length && <p class="muted">No requests today yet.</p>}
      </Panel>
      <Panel id="top-accounts" title="Top accounts today">
        <Table compact testid="top-accounts" cols={['account', ...TODAY_COLS]} num={TODAY_COLS}>
          {(accounts?.data ?? []).map((a: any) => (
            <tr data-account={a.account}>
              <td>{a.account ?? '—'}</td>
              <TodayCells t={a} />
            </tr>
          ))}
        </Table>
      </Panel>
    </div>
  )
}

/** The columns of `TodayCells`, all numbers. */
const TODAY_COLS = ['requests', 'tokens', '4xx/5xx', '429s']

/** A top key's or account's day: requests, tokens, refusals and failures (4xx/5xx), 429s. */
function TodayCells({
  t,
}: {
  t: { requests: number; total_tokens: number; errors: number; rate_limited: number }
}) {
  return (
    <>
      <td class="num">{num(t.requests)}</td>
      <td class="num">{num(t.total_tokens)}</td>
      <td class="num">{num(t.errors)}</td>
      <td class="num">{num(t.rate_limited)}</td>
    </>
  )
}
