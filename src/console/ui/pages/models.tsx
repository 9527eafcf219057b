/** @module The model catalogue: limits, features, and which plans may use each model. */
import { api } from '../api.ts'
import { num } from '../format.ts'
import { priceLine } from '../money.ts'
import { Page, Table } from '../parts.tsx'
import { useLoad } from './hooks.ts'

export function Models() {
  const { data, error } = useLoad(() => api('GET', '/admin/v1/models'), [])
  return (
    <Page id="models" title="Models">
      {error && <p class="notice error">{error}</p>}
      <Table
        cols={['model', 'provider', 'context', 'max output', 'features', 'tier', 'price', 'plans']}
        num={['context', 'max output']}
      >
        {(data?.data ?? []).map((m: any) => (
          <tr>
            <td>
              <code>{m.id}</code>
              {m.demo && <span class="badge warn"> demo</span>}
            </td>
            <td>{m.provider_kind}</td>
            <td class="num">{num(m.context_window)}</td>
            <td class="num">{num(m.max_output_tokens)}</td>
            <td>
              <div class="chips">
                {m.features.map((f: string) => (
                  <span class="chip">{f}</span>
                ))}
              </div>
            </td>
            <td>{m.tier ?? '—'}</td>
            <td>{priceLine(m)}</td>
            <td>{m.plans.length ? m.plans.join(', ') : <span class="muted">none</span>}</td>
          </tr>
        ))}
      </Table>
    </Page>
  )
}
