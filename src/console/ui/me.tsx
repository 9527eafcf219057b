/**
 * @module
 * A key holder's own page: sign in with the API key (exchanged for a session cookie scoped to
 * /console/me), then the account's plan, limits, remaining days, usage charts and recent requests
 * — the `/v1/usage` figures as a page. The server pins every figure to the key's account.
 */
import { render } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { api } from './api.ts'
import { Chart, seriesLines } from './chart.tsx'
import { num, when } from './format.ts'
import { bindingWindow, MoneyTiles } from './me-money.tsx'
import { OutcomeCells, Table } from './parts.tsx'
import { SignIn } from './sign-in.tsx'

/** Requests left in a window: the account's or the key's own, whichever leaves less. */
function Window({ name, u }: { name: 'minute' | 'day'; u: any }) {
  const b = bindingWindow(u, name)
  return (
    <div class="tile" data-testid={`me-${name}`}>
      <span class="v">{b ? `${num(b.w.remaining)} / ${num(b.w.limit)}` : 'no limit'}</span>
      <span class="k">
        left this {name}
        {b?.own ? ' (this key)' : ''}
      </span>
    </div>
  )
}

/** A usage chart, or the plain words when its span holds no request. */
function Bars({
  id,
  title,
  data,
  step,
}: {
  id: string
  title: string
  data: ReturnType<typeof seriesLines>
  step: number
}) {
  if (!data.lines.length)
    return (
      <figure class="chart" id={id} data-testid={id}>
        <figcaption>{title}</figcaption>
        <p class="notice">No requests in this span yet.</p>
      </figure>
    )
  return <Chart id={id} title={title} x={data.x} lines={data.lines} kind="bars" step={step} />
}

function Overview({ data, onSignOut }: { data: any; onSignOut: () => void }) {
  const u = data.usage
  const info = u.account_information
  const sub = u.subscription_details
  const hourly = seriesLines(data.hourly.series, 'requests')
  const daily = seriesLines(data.daily.series, 'total_tokens')
  return (
    <main class="me">
      <header>
        <h1>
          {info.name} <span class="muted">— plan {sub.plan}</span>
        </h1>
        <button
          type="button"
          class="secondary"
          onClick={async () => {
            await api('DELETE', '/console/me/session').catch(() => {})
            onSignOut()
          }}
        >
          Sign out
        </button>
      </header>
      {!info.is_enabled && (
        <p class="notice error" role="alert">
          Requests with this key are refused now: {info.disabled_reason}.
        </p>
      )}
      <div class="tiles">
        <div class="tile">
          <span class="v">{sub.status}</span>
          <span class="k">plan status</span>
        </div>
        <div class="tile">
          <span class="v">{sub.remaining_days ?? 'no end'}</span>
          <span class="k">days left{sub.expires_at ? ` (until ${when(sub.expires_at)})` : ''}</span>
        </div>
        <Window name="minute" u={u} />
        <Window name="day" u={u} />
        <div class="tile" data-testid="me-today-requests">
          <span class="v">{num(u.usage.today.requests)}</span>
          <span class="k">requests today</span>
        </div>
        <div class="tile">
          <span class="v">{num(u.usage.today.total_tokens)}</span>
          <span class="k">tokens today</span>
        </div>
        <MoneyTiles u={u} />
      </div>
      <div class="charts">
        <Bars id="me-hourly" title="Requests per hour, last 24 h (UTC)" data={hourly} step={3600} />
        <Bars id="me-daily" title="Tokens per day, last 30 days (UTC)" data={daily} step={86_400} />
      </div>
      <h2>Recent requests</h2>
      {data.recent.length === 0 ? (
        <p class="notice" data-testid="me-recent-empty">
          No requests yet.
        </p>
      ) : (
        <Table
          testid="me-recent"
          cols={['time', 'model', 'status', 'latency', 'tokens']}
          num={['status', 'latency', 'tokens']}
        >
          {data.recent.map((r: any) => (
            <tr data-request-id={r.request_id}>
              <td>{when(r.created_at)}</td>
              <td>{r.model}</td>
              <OutcomeCells r={r} />
            </tr>
          ))}
        </Table>
      )}
    </main>
  )
}

function App() {
  const [state, setState] = useState<'loading' | 'out' | { data: any }>('loading')
  const load = () =>
    api('GET', '/console/me/api/overview')
      .then((data) => setState({ data }))
      .catch(() => setState('out'))
  useEffect(() => {
    load()
  }, [])
  if (state === 'loading') return <p class="boot">Loading…</p>
  if (state === 'out')
    return (
      <SignIn
        title="My usage"
        label="API key"
        field="key"
        path="/console/me/session"
        autocomplete="off"
        placeholder="sk-sy-…"
        onDone={load}
      >
        <p class="muted">Shows this key's account only. The key is not kept by the page.</p>
      </SignIn>
    )
  return <Overview data={state.data} onSignOut={() => setState('out')} />
}

if (window.top !== window.self) document.body.textContent = 'This page cannot be shown inside a frame.'
else render(<App />, document.getElementById('app')!)
