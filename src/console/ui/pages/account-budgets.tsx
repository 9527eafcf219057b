/**
 * @module
 * Budgets on the accounts page: each account whose plan has a budget, with what is spent (settled),
 * held by requests in flight and left in the current period (from /admin/v1/accounts/:name/usage,
 * the numbers `/v1/usage` reports: spent + held + left = the budget).
 */
import { api } from '../api.ts'
import { when } from '../format.ts'
import { usd } from '../money.ts'
import { ErrorNotice, Table } from '../parts.tsx'
import { useLoad } from './hooks.ts'

/** Reading each account's usage costs a request: the page shows this many budgets at most. */
const MAX_SHOWN = 50

export function AccountBudgets({ accounts, plans }: { accounts: any[]; plans: any[] }) {
  const budgeted = new Set(plans.filter((p) => p.budget).map((p) => p.name))
  const names = accounts
    .filter((a) => budgeted.has(a.plan))
    .map((a) => a.name as string)
    .slice(0, MAX_SHOWN)
  const { data, error } = useLoad(
    () =>
      Promise.all(
        names.map((n) => api('GET', `/admin/v1/accounts/${encodeURIComponent(n)}/usage`).then((u) => [n, u])),
      ),
    [names.join('\n')],
  )
  if (!budgeted.size) return null
  return (
    <section aria-labelledby="h-budgets">
      <h2 id="h-budgets">Budgets</h2>
      <ErrorNotice error={error} />
      {names.length === 0 && <p class="muted">No account is on a plan with a budget.</p>}
      {names.length > 0 && (
        <Table
          testid="budgets"
          cols={['account', 'budget', 'spent', 'held', 'left', 'resets']}
          num={['budget', 'spent', 'held', 'left']}
        >
          {(data ?? []).map(([name, u]: any) => {
            const b = u.budget
            return (
              <tr data-account={name}>
                <td>{name}</td>
                <td class="num">{b ? `${usd(b.usd)}/${b.period}` : '—'}</td>
                <td class="num">{b ? usd(b.spent_usd) : '—'}</td>
                <td class="num" title="held by requests still in flight">
                  {b ? usd(b.reserved_usd) : '—'}
                </td>
                <td class="num">
                  {b && (
                    <span class={`badge ${b.remaining_usd > 0 ? 'ok' : 'bad'}`}>{usd(b.remaining_usd)}</span>
                  )}
                </td>
                <td>{b ? when(b.resets_at) : '—'}</td>
              </tr>
            )
          })}
        </Table>
      )}
    </section>
  )
}
