/**
 * @module
 * The key holder's token and money figures, from the `/v1/usage` document: tokens left this
 * minute and day where the plan or the key limits them (whichever leaves less), the budget that
 * applies (spent and left in its period), and what today cost.
 */
import { num, when } from './format.ts'
import { usd } from './money.ts'

type Measure = 'minute' | 'day' | 'tokens_minute' | 'tokens_day'

/**
 * The window that applies to this key for a measure: of the account's (`rate_limits`) and the
 * key's own (`account_information.key.rate_limits`), the one with less left — the account's on a
 * tie, as admission and the budget tile choose. Null when neither limits it.
 */
export function bindingWindow(u: any, measure: Measure): { w: any; own: boolean } | null {
  const account = u.rate_limits[measure]
  const own = u.account_information.key?.rate_limits?.[measure] ?? null
  const limited = account && account.limit !== null ? account : null
  if (own && (!limited || own.remaining < limited.remaining)) return { w: own, own: true }
  return limited ? { w: limited, own: false } : null
}

function TokenTile({ u, measure, name }: { u: any; measure: Measure; name: string }) {
  const b = bindingWindow(u, measure)
  if (!b) return null
  return (
    <div class="tile" data-testid={`me-${measure.replace('_', '-')}`}>
      <span class="v">{`${num(b.w.remaining)} / ${num(b.w.limit)}`}</span>
      <span class="k">
        tokens left this {name}
        {b.own ? ' (this key)' : ''}
      </span>
    </div>
  )
}

export function MoneyTiles({ u }: { u: any }) {
  const b = u.budget
  return (
    <>
      <TokenTile u={u} measure="tokens_minute" name="minute" />
      <TokenTile u={u} measure="tokens_day" name="day" />
      {b && (
        <div class="tile" data-testid="me-budget">
          <span class="v">{`${usd(b.remaining_usd)} / ${usd(b.usd)}`}</span>
          <span class="k">
            budget left this {b.period}
            {b.scope === 'key' ? ' (this key)' : ''}, resets {when(b.resets_at)}
          </span>
        </div>
      )}
      <div class="tile" data-testid="me-today-cost">
        <span class="v">{usd(u.usage.today.cost_usd)}</span>
        <span class="k">cost today</span>
      </div>
    </>
  )
}
