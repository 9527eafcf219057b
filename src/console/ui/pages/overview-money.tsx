/**
 * @module
 * Spend on the overview (DESIGN §15): today and this month (UTC), per account and per key, each
 * beside the budget it is burning and how much of that budget's period is gone. From
 * `GET /admin/v1/overview/spend`: the settled cost the usage rollups recorded (money still held by
 * requests in flight is not in it).
 */
import { num } from '../format.ts'
import { usd } from '../money.ts'
import { KeyCells, Panel, Table } from '../parts.tsx'

export interface Burn {
  usd: number
  period: string
  spent_usd: number
  used: number | null
  resets_at: string
}

/** A budget's burn: a bar and `$3.20 of $10.00/month (32 %)`; a dash without a budget. */
export function BudgetBurn({ budget }: { budget: Burn | null }) {
  if (!budget) return <span class="muted">no budget</span>
  const used = budget.used ?? 0
  const pct = Math.round(used * 1000) / 10
  const level = used >= 1 ? 'bad' : used >= 0.8 ? 'warn' : 'ok'
  return (
    <span
      class="burn"
      title={budget.resets_at ? `this ${budget.period} resets ${budget.resets_at}` : undefined}
    >
      <span class={`bar ${level}`} aria-hidden="true">
        <span style={{ width: `${Math.min(100, pct)}%` }} />
      </span>
      <span class="burn-text">
        {usd(budget.spent_usd)} of {usd(budget.usd)}/{budget.period} ({pct} %)
      </span>
    </span>
  )
}

export function SpendTiles({ spend }: { spend: any }) {
  return (
    <>
      <div class="tile" data-testid="spend-today">
        <span class="v">{spend ? usd(spend.today_usd) : '…'}</span>
        <span class="k">spent today (UTC)</span>
      </div>
      <div class="tile" data-testid="spend-month">
        <span class="v">{spend ? usd(spend.month_usd) : '…'}</span>
        <span class="k">spent this month</span>
      </div>
    </>
  )
}

/**
 * This month's prompt-cache tokens of a spend row (`GET /admin/v1/overview/spend`): read from the
 * providers' caches (priced at `cached_input`) and written to them (at `cache_write`); — for none.
 */
export function CacheTokens({ row }: { row: any }) {
  const read = row?.month_cached_tokens ?? 0
  const written = row?.month_cache_write_tokens ?? 0
  if (!read && !written) return <span class="muted">—</span>
  return (
    <span title="prompt tokens read from the provider's cache · written to it, this month">
      {num(read)} read · {num(written)} written
    </span>
  )
}

export function SpendPanels({ spend }: { spend: any }) {
  return (
    <>
      <Panel id="spend-accounts" title="Spend by account">
        <p class="muted">Settled cost; budgets by their own period (UTC).</p>
        <Table
          compact
          testid="spend-accounts"
          cols={['account', 'today', 'month', 'budget']}
          num={['today', 'month']}
        >
          {(spend?.accounts ?? []).map((a: any) => (
            <tr data-account={a.account}>
              <td>{a.account}</td>
              <td class="num">{usd(a.today_usd)}</td>
              <td class="num">{usd(a.month_usd)}</td>
              <td>
                <BudgetBurn budget={a.budget} />
              </td>
            </tr>
          ))}
        </Table>
        {spend && !spend.accounts.length && <p class="muted">Nothing spent this month, no budgets.</p>}
      </Panel>
      <Panel id="spend-keys" title="Spend by key">
        <p class="muted">This month's spenders, the biggest first.</p>
        <Table
          compact
          testid="spend-keys"
          cols={['key', 'account', 'today', 'month', 'cached', 'budget']}
          num={['today', 'month']}
        >
          {(spend?.keys ?? []).slice(0, 10).map((k: any) => (
            <tr data-key={k.key_id}>
              <KeyCells k={k} />
              <td class="num">{usd(k.today_usd)}</td>
              <td class="num">{usd(k.month_usd)}</td>
              <td data-col="cached">
                <CacheTokens row={k} />
              </td>
              <td>
                <BudgetBurn budget={k.budget} />
              </td>
            </tr>
          ))}
        </Table>
        {spend && !spend.keys.length && <p class="muted">No key spent anything this month.</p>}
      </Panel>
    </>
  )
}
