/** @module The request log: filters, cursor pages, one request's details. */
import { useState } from 'preact/hooks'
import { SURFACE_NAMES } from '../../../traffic/surfaces.ts'
import { api, qs } from '../api.ts'
import { localToIso, ms, num, when } from '../format.ts'
import { usd } from '../money.ts'
import { ErrorNotice, OutcomeCells, Page, Pager, Table } from '../parts.tsx'
import { useLoad } from './hooks.ts'

const EMPTY = { account: '', key: '', model: '', surface: '', status: '', from: '', to: '' }

function Detail({ r }: { r: any }) {
  const rows: Array<[string, unknown]> = [
    ['request id', r.request_id],
    ['time', when(r.created_at)],
    ['account', r.account],
    ['key', r.key_id],
    ['surface', r.surface],
    ['model', r.model],
    ['answered by', r.answered_by ?? r.model],
    ['upstream attempts', r.attempts ?? '—'],
    ['stream', r.stream ? 'yes' : 'no'],
    ['status', r.status ?? 'in flight'],
    ['latency', ms(r.latency_ms)],
    ['time to first token', ms(r.ttft_ms)],
    ['prompt tokens', num(r.prompt_tokens)],
    ['completion tokens', num(r.completion_tokens)],
    ['cost', usd(r.cost_usd)],
    // DESIGN §11: no usage from the upstream — the gateway's settled estimate is what was charged.
    [
      'tokens and cost',
      r.estimated ? 'estimated by the gateway (no usage from the upstream)' : 'as the upstream reported',
    ],
    ['error', r.error_code ?? '—'],
  ]
  return (
    <section class="detail" aria-label="Request details" data-testid="request-detail">
      <h2>Request {r.id}</h2>
      <dl>
        {rows.map(([k, v]) => (
          <>
            <dt>{k}</dt>
            <dd>{String(v)}</dd>
          </>
        ))}
      </dl>
    </section>
  )
}

export function Requests() {
  const [filter, setFilter] = useState(EMPTY)
  const [cursors, setCursors] = useState<string[]>([''])
  const [selected, setSelected] = useState<any>(null)
  const cursor = cursors[cursors.length - 1]
  const { data, error } = useLoad(
    () =>
      api(
        'GET',
        `/admin/v1/requests${qs({ ...filter, from: localToIso(filter.from), to: localToIso(filter.to), cursor, limit: 50 })}`,
      ),
    [filter, cursor],
  )
  const apply = (e: Event) => {
    e.preventDefault()
    const f = new FormData(e.target as HTMLFormElement)
    setFilter(
      Object.fromEntries(Object.keys(EMPTY).map((k) => [k, String(f.get(k) ?? '').trim()])) as typeof EMPTY,
    )
    setCursors([''])
    setSelected(null)
  }
  const field = (name: keyof typeof EMPTY, label: string, props: Record<string, unknown> = {}) => (
    <label>
      {label}
      <input name={name} value={filter[name]} {...props} />
    </label>
  )
  return (
    <Page id="requests" title="Request log">
      <form class="bar" onSubmit={apply} aria-label="Request log filters">
        {field('account', 'Account', { size: 10 })}
        {field('key', 'Key id', { size: 12 })}
        {field('model', 'Model', { size: 14 })}
        <label>
          Surface
          <select name="surface" value={filter.surface}>
            <option value="">any</option>
            {SURFACE_NAMES.map((name) => (
              <option key={name}>{name}</option>
            ))}
          </select>
        </label>
        {field('status', 'Status (502, 5xx)', { size: 6, pattern: '[1-5]([0-9]{2}|xx)' })}
        {field('from', 'From', { type: 'datetime-local' })}
        {field('to', 'To', { type: 'datetime-local' })}
        <button type="submit">Apply</button>
      </form>
      <ErrorNotice error={error} />
      <Table
        describedBy="log-help"
        cols={['time', 'account', 'surface', 'model', 'status', 'latency', 'tokens', 'cost', 'error']}
        num={['status', 'latency', 'tokens', 'cost']}
      >
        {(data?.data ?? []).map((r: any) => (
          <tr
            class={`clickable${selected?.id === r.id ? ' selected' : ''}`}
            data-request-id={r.request_id}
            tabIndex={0}
            onClick={() => setSelected(r)}
            onKeyDown={(e) => {
              if (e.key !== 'Enter' && e.key !== ' ') return
              e.preventDefault()
              setSelected(r)
            }}
          >
            <td>{when(r.created_at)}</td>
            <td>{r.account}</td>
            <td>{r.surface}</td>
            <td title={r.attempts > 1 ? `${r.attempts} upstream attempts` : undefined}>
              {r.answered_by ? `${r.model} → ${r.answered_by}` : r.model}
            </td>
            <OutcomeCells r={r} />
            <td class="num">{usd(r.cost_usd)}</td>
            <td>{r.error_code ?? ''}</td>
          </tr>
        ))}
      </Table>
      <p id="log-help" class="muted">
        Newest first. Select a row (click, or Enter) for its details. “estimated”: the upstream sent no usage;
        the tokens and cost are what the gateway settled the request to.
        {data && !data.data.length && ' No requests match on this page.'}
      </p>
      <Pager cursors={cursors} setCursors={setCursors} next={data?.next_cursor} />
      {selected && <Detail r={selected} />}
    </Page>
  )
}
