/**
 * @module The plans from the config (read-only: plans are edited in switchyard.yaml and applied by a
 * live reload), a column per limit that holds an account (config/limit-settings.ts).
 */
import { ACCOUNT_LIMITS, type LimitSetting } from '../../../config/limit-settings.ts'
import { api } from '../api.ts'
import { num } from '../format.ts'
import { usd } from '../money.ts'
import { Page, Table } from '../parts.tsx'
import { useLoad } from './hooks.ts'

/** The policy the API sends, its default applied (a plan without `on_expiry` downgrades to the default plan). */
const expiry = (p: any) => (p.on_expiry === 'disable' ? 'disable' : `downgrade to ${p.on_expiry.downgrade}`)
const limit = (n: number | null | undefined) => (n === null || n === undefined ? 'no limit' : num(n))

/** A plan's cell for `s`: a count or `no limit`, `$10.00/month` or `none`, the model chips. */
function cell(s: LimitSetting, p: any) {
  const v = p[s.name]
  if (s.kind === 'count') return <td class="num">{limit(v)}</td>
  if (s.kind === 'budget') return <td class="num">{v ? `${usd(v.usd)}/${v.period}` : 'none'}</td>
  return (
    <td>
      <div class="chips">
        {v.map((m: string) => (
          <span class="chip">{m}</span>
        ))}
      </div>
    </td>
  )
}

/** Right-aligned: the counts and the money. */
const NUMERIC = ACCOUNT_LIMITS.filter((s) => s.kind !== 'models').map((s) => s.label)

export function Plans() {
  const { data, error } = useLoad(() => api('GET', '/admin/v1/plans'), [])
  return (
    <Page id="plans" title="Plans">
      <p class="muted">
        Plans come from the config file. Change them there, then reload it without a restart:{' '}
        <code>switchyard reload</code>, <code>kill -HUP</code> of the serve process, or{' '}
        <code>POST /admin/v1/reload</code>. Requests in flight finish on the plans they started with.
      </p>
      {error && <p class="notice error">{error}</p>}
      <Table
        cols={['plan', ...ACCOUNT_LIMITS.map((s) => s.label), 'days', 'at expiry']}
        num={[...NUMERIC, 'days']}
      >
        {(data?.data ?? []).map((p: any) => (
          <tr>
            <td>
              {p.name}
              {p.default && <span class="badge ok"> default</span>}
            </td>
            {ACCOUNT_LIMITS.map((s) => cell(s, p))}
            <td class="num">{p.days == null ? 'no end' : num(p.days)}</td>
            <td>{expiry(p)}</td>
          </tr>
        ))}
      </Table>
    </Page>
  )
}
