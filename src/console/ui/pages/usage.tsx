/** @module Usage over time per account, key, model or surface (stacked bars), by hour or by day. */
import { useState } from 'preact/hooks'
import { api, apiAll, qs } from '../api.ts'
import { Chart, seriesLines } from '../chart.tsx'
import { num } from '../format.ts'
import { usd } from '../money.ts'
import { ErrorNotice, Page } from '../parts.tsx'
import { useLoad } from './hooks.ts'

const METRICS = [
  ['requests', 'Requests'],
  ['total_tokens', 'Tokens'],
  ['cost_usd', 'Cost (USD)'],
  ['errors', 'Errors'],
  ['rate_limited', 'Refused (429)'],
] as const

export function Usage() {
  const [f, setF] = useState({
    account: '',
    model: '',
    bucket: 'hour',
    group_by: 'model',
    metric: 'requests',
  })
  const set = (k: string) => (e: Event) => setF({ ...f, [k]: (e.target as HTMLSelectElement).value })
  const { data, error } = useLoad(
    () =>
      Promise.all([
        api(
          'GET',
          `/admin/v1/usage/series${qs({ bucket: f.bucket, group_by: f.group_by, account: f.account, model: f.model })}`,
        ),
        apiAll('/admin/v1/accounts'),
        api('GET', '/admin/v1/models'),
        // Per key: the keys' labels name the lines (the series name keys by id).
        f.group_by === 'key' ? apiAll('/admin/v1/keys') : Promise.resolve({ data: [] }),
      ]),
    [f.account, f.model, f.bucket, f.group_by],
  )
  const keys: any[] = data?.[3].data ?? []
  const label = (k: any) => `${k.account} · ${k.name ?? k.id}`
  const twice = new Set(keys.map(label).filter((l, i, all) => all.indexOf(l) !== i))
  const names = new Map<string, string>(
    keys.map((k) => [k.id, twice.has(label(k)) ? `${label(k)} (${k.id})` : label(k)]),
  )
  const series = (data?.[0].series ?? []).map((s: any) => ({ ...s, group: names.get(s.group) ?? s.group }))
  const { x, lines } = seriesLines(series, f.metric)
  const metric = METRICS.find((m) => m[0] === f.metric)![1]
  const totals = series.map((s: any) => ({
    group: s.group,
    requests: s.points.reduce((a: number, p: any) => a + p.requests, 0),
    tokens: s.points.reduce((a: number, p: any) => a + p.total_tokens, 0),
    // Summed in micro-dollars: adding USD floats would drift.
    cost: s.points.reduce((a: number, p: any) => a + Math.round(p.cost_usd * 1e6), 0) / 1e6,
    errors: s.points.reduce((a: number, p: any) => a + p.errors, 0),
    limited: s.points.reduce((a: number, p: any) => a + p.rate_limited, 0),
  }))
  return (
    <Page id="usage" title="Usage">
      <form class="bar" aria-label="Usage filters" onSubmit={(e) => e.preventDefault()}>
        <AllOrOne
          label="Account"
          name="account"
          value={f.account}
          onChange={set('account')}
          names={(data?.[1].data ?? []).map((a: any) => a.name)}
        />
        <AllOrOne
          label="Model"
          name="model"
          value={f.model}
          onChange={set('model')}
          names={(data?.[2].data ?? []).map((m: any) => m.id)}
        />
        <label>
          By
          <select value={f.bucket} onChange={set('bucket')} name="bucket">
            <option value="hour">hour (last 24 h)</option>
            <option value="day">day (last 30 days)</option>
          </select>
        </label>
        <label>
          One line per
          <select value={f.group_by} onChange={set('group_by')} name="group_by">
            <option value="model">model</option>
            <option value="account">account</option>
            <option value="key">key</option>
            <option value="surface">surface</option>
            <option value="none">total</option>
          </select>
        </label>
        <label>
          Show
          <select value={f.metric} onChange={set('metric')} name="metric">
            {METRICS.map(([k, l]) => (
              <option value={k}>{l}</option>
            ))}
          </select>
        </label>
      </form>
      <ErrorNotice error={error} />
      {data && !series.length && <p class="notice">No usage in this range.</p>}
      {series.length > 0 && (
        <Chart
          id="usage-chart"
          title={`${metric} per ${data?.[0].bucket ?? f.bucket} (UTC)`}
          x={x}
          lines={lines}
          kind="bars"
          // The answer's own bucket: until the next answer comes, the chart is still the last one.
          step={data?.[0].bucket === 'day' ? 86_400 : 3600}
          format={f.metric === 'cost_usd' ? usd : num}
        />
      )}
      {totals.length > 0 && (
        <>
          <h2>Totals in this range</h2>
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">{f.group_by === 'none' ? '' : f.group_by}</th>
                  <th class="num">requests</th>
                  <th class="num">tokens</th>
                  <th class="num">cost</th>
                  <th class="num">errors</th>
                  <th class="num">refused (429)</th>
                </tr>
              </thead>
              <tbody>
                {totals.map((t: any) => (
                  <tr>
                    <td>{t.group}</td>
                    <td class="num">{num(t.requests)}</td>
                    <td class="num">{num(t.tokens)}</td>
                    <td class="num">{usd(t.cost)}</td>
                    <td class="num">{num(t.errors)}</td>
                    <td class="num">{num(t.limited)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </Page>
  )
}

/** A filter that is "all" (the empty value) or one of `names`. */
function AllOrOne(props: {
  label: string
  name: string
  value: string
  onChange: (e: Event) => void
  names: string[]
}) {
  return (
    <label>
      {props.label}
      <select value={props.value} onChange={props.onChange} name={props.name}>
        <option value="">all</option>
        {props.names.map((n) => (
          <option>{n}</option>
        ))}
      </select>
    </label>
  )
}
