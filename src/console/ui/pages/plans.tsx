/** @module The plans from the config (read-only: plans are edited in switchyard.yaml). */
import { api } from '../api.ts'
import { num } from '../format.ts'
import { usd } from '../money.ts'
import { TableHead } from '../parts.tsx'
import { useLoad } from './hooks.ts'

/** The policy the API sends, its default applied (a plan without `on_expiry` downgrades to the default plan). */
const expiry = (p: any) => (p.on_expiry === 'disable' ? 'disable' : `downgrade to ${p.on_expiry.downgrade}`)
const limit = (n: number | null | undefined) => (n === null || n === undefined ? 'no limit' : num(n))

export function Plans() {
  const { data, error } = useLoad(() => api('GET', '/admin/v1/plans'), [])
  return (
    <section aria-labelledby="h-plans">
      <h1 id="h-plans" tabIndex={-1}>
        Plans
      </h1>
      <p class="muted">Plans come from the config file; change them there and restart.</p>
      {error && <p class="notice error">{error}</p>}
      <div class="table-wrap">
        <table>
          <TableHead
            cols={[
              'plan',
              'requests / min',
              'requests / day',
              'tokens / min',
              'tokens / day',
              'budget',
              'models',
              'days',
              'at expiry',
            ]}
            num={['requests / min', 'requests / day', 'tokens / min', 'tokens / day', 'budget', 'days']}
          />
          <tbody>
            {(data?.data ?? []).map((p: any) => (
              <tr>
                <td>
                  {p.name}
                  {p.default && <span class="badge ok"> default</span>}
                </td>
                <td class="num">{limit(p.rpm)}</td>
                <td class="num">{limit(p.rpd)}</td>
                <td class="num">{limit(p.tpm)}</td>
                <td class="num">{limit(p.tpd)}</td>
                <td class="num">{p.budget ? `${usd(p.budget.usd)}/${p.budget.period}` : 'none'}</td>
                <td>
                  <div class="chips">
                    {p.models.map((m: string) => (
                      <span class="chip">{m}</span>
                    ))}
                  </div>
                </td>
                <td class="num">{p.days == null ? 'no end' : num(p.days)}</td>
                <td>{expiry(p)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  )
}
