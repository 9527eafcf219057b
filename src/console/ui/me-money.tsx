/**
 * @module
 * The key holder's token and money figures, from the `/v1/usage` document: tokens left this
 * minute and day where the plan limits them, the budget that applies (spent and left in its
 * period), and what today cost.
 */
import { num, when } from './format.ts'
import { usd } from './money.ts'

export function MoneyTiles({ u }: { u: any }) {
  const rl = u.rate_limits
  const b = u.budget
  return (
    <>
      {rl.tpm !== null && (
        <div class="tile">
          <span class="v">{`${num(rl.tokens_minute.remaining)} / ${num(rl.tpm)}`}</span>
          <span class="k">tokens left this minute</span>
        </div>
      )}
      {rl.tpd !== null && (
        <div class="tile">
          <span class="v">{`${num(rl.tokens_day.remaining)} / ${num(rl.tpd)}`}</span>
          <span class="k">tokens left this day</span>
        </div>
      )}
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
