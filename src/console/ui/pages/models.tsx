/**
 * @module The model catalogue: limits, features, and which plans may use each model; then the
 * aliases (DESIGN §13) with their targets and weights, whether `/v1/models` lists them, and the
 * plans that reach them.
 */
import { api } from '../api.ts'
import { num } from '../format.ts'
import { priceLine } from '../money.ts'
import { Page, Table } from '../parts.tsx'
import { useLoad } from './hooks.ts'

export function Models() {
  const { data, error } = useLoad(() => api('GET', '/admin/v1/models'), [])
  const all: any[] = data?.data ?? []
  const aliases = all.filter((m) => m.targets)
  return (
    <Page id="models" title="Models">
      {error && <p class="notice error">{error}</p>}
      <Table
        testid="models"
        cols={['model', 'provider', 'context', 'max output', 'features', 'tier', 'price', 'plans']}
        num={['context', 'max output']}
      >
        {all
          .filter((m) => !m.targets)
          .map((m: any) => (
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
      {aliases.length > 0 && <Aliases aliases={aliases} />}
    </Page>
  )
}

/** The operator's names for models: a pattern or an id, what it sends to (by weight), listed or hidden. */
function Aliases({ aliases }: { aliases: any[] }) {
  return (
    <section aria-labelledby="h-aliases">
      <h2 id="h-aliases">Aliases</h2>
      <p class="muted">
        Requests to an alias go to its targets by weight; a hidden one is callable but not in /v1/models; a
        pattern takes the ids it matches.
      </p>
      <Table testid="aliases" cols={['alias', 'targets', 'listed', 'plans']}>
        {aliases.map((a: any) => (
          <tr data-alias={a.id}>
            <td>
              <code>{a.id}</code>
              {a.pattern && <span class="badge"> pattern</span>}
            </td>
            <td>
              {a.targets.map((t: any) => (
                <div>
                  <code>{t.model}</code> × {t.weight}
                </div>
              ))}
            </td>
            <td>{a.listed ? 'listed' : 'hidden'}</td>
            <td>{a.plans.length ? a.plans.join(', ') : <span class="muted">none</span>}</td>
          </tr>
        ))}
      </Table>
    </section>
  )
}
