/** @module Accounts: create, change or renew the plan, disable/enable, plan history. */
import { useState } from 'preact/hooks'
import { api, apiAll } from '../api.ts'
import { num, shortWhen, when } from '../format.ts'
import { ErrorNotice, Page, Table } from '../parts.tsx'
import { AccountBudgets } from './account-budgets.tsx'
import { useAction, useLoad } from './hooks.ts'

const days = (v: string) => (v ? Number(v) : undefined)

function PlanForm({
  name,
  plan,
  plans,
  onDone,
}: {
  name: string
  /** The account's current plan: preselected, so "Set plan" alone never changes it. */
  plan: string
  plans: string[]
  onDone: (fn: () => Promise<unknown>) => void
}) {
  return (
    <form
      class="actions nowrap"
      onSubmit={(e) => {
        e.preventDefault()
        const f = new FormData(e.target as HTMLFormElement)
        onDone(() =>
          api('POST', `/admin/v1/accounts/${encodeURIComponent(name)}/plan`, {
            plan: f.get('plan'),
            days: days(String(f.get('days'))),
          }),
        )
      }}
    >
      <label class="sr-only" for={`plan-${name}`}>
        Plan for {name}
      </label>
      <select id={`plan-${name}`} name="plan">
        {(plans.includes(plan) ? plans : [plan, ...plans]).map((p) => (
          <option selected={p === plan}>{p}</option>
        ))}
      </select>
      <label class="sr-only" for={`days-${name}`}>
        Days for {name}
      </label>
      <input
        id={`days-${name}`}
        name="days"
        type="number"
        min="1"
        max="36500"
        placeholder="days"
        style="width:5.5rem"
      />
      <button type="submit" class="secondary">
        Set plan
      </button>
    </form>
  )
}

function History({ name }: { name: string }) {
  const { data, error } = useLoad(() => api('GET', `/admin/v1/accounts/${encodeURIComponent(name)}`), [name])
  if (error) return <p class="notice error">{error}</p>
  if (!data) return <p>Loading…</p>
  return (
    <div class="detail">
      <h2>Plan history of {name}</h2>
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th>plan</th>
              <th>reason</th>
              <th>started</th>
              <th>expires</th>
              <th>changed</th>
            </tr>
          </thead>
          <tbody>
            {data.plan_history.map((h: any) => (
              <tr>
                <td>{h.plan}</td>
                <td>{h.reason}</td>
                <td>{when(h.started_at)}</td>
                <td>{when(h.expires_at)}</td>
                <td>{when(h.changed_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  )
}

export function Accounts() {
  const { data, error, reload, setError } = useLoad(
    () => Promise.all([apiAll('/admin/v1/accounts'), api('GET', '/admin/v1/plans')]),
    [],
  )
  const act = useAction(reload, setError)
  const [open, setOpen] = useState<string | null>(null)
  const plans: string[] = data?.[1].data.map((p: any) => p.name) ?? []
  const create = (e: Event) => {
    e.preventDefault()
    const form = e.target as HTMLFormElement
    const f = new FormData(form)
    act(async () => {
      await api('POST', '/admin/v1/accounts', {
        name: f.get('name'),
        plan: f.get('plan'),
        days: days(String(f.get('days'))),
      })
      form.reset()
    })
  }
  return (
    <Page id="accounts" title="Accounts">
      <form class="bar" onSubmit={create} aria-label="Create an account">
        <label>
          Name
          <input name="name" required pattern="[A-Za-z0-9][A-Za-z0-9._@\-]{0,63}" />
        </label>
        <label>
          Plan
          <select name="plan">
            {plans.map((p) => (
              <option selected={p === data?.[1].data.find((x: any) => x.default)?.name}>{p}</option>
            ))}
          </select>
        </label>
        <label>
          Days (optional)
          <input name="days" type="number" min="1" max="36500" />
        </label>
        <button type="submit">Create account</button>
      </form>
      <ErrorNotice error={error} />
      <Table
        compact
        cols={['name', 'plan', 'status', 'expires', 'days left', 'created', 'actions']}
        num={['days left']}
        end="actions"
      >
        {(data?.[0].data ?? []).map((a: any) => (
          <tr data-account={a.name}>
            <td>{a.name}</td>
            <td>
              {a.plan}
              {a.plan_status === 'expired' && <span class="badge bad"> expired</span>}
            </td>
            <td>
              <span class={`badge ${a.enabled ? 'ok' : 'bad'}`}>{a.enabled ? 'enabled' : 'disabled'}</span>
            </td>
            <td title={when(a.plan_expires_at)}>{shortWhen(a.plan_expires_at)}</td>
            <td class="num">{num(a.remaining_days)}</td>
            <td title={when(a.created_at)}>{shortWhen(a.created_at)}</td>
            <td class="sticky-end">
              <div class="actions nowrap">
                <PlanForm name={a.name} plan={a.plan} plans={plans} onDone={act} />
                <button
                  type="button"
                  class={a.enabled ? 'danger' : 'secondary'}
                  onClick={() =>
                    act(() =>
                      api(
                        'POST',
                        `/admin/v1/accounts/${encodeURIComponent(a.name)}/${a.enabled ? 'disable' : 'enable'}`,
                      ),
                    )
                  }
                >
                  {a.enabled ? 'Disable' : 'Enable'}
                </button>
                <button
                  type="button"
                  class="secondary"
                  aria-expanded={open === a.name}
                  onClick={() => setOpen(open === a.name ? null : a.name)}
                >
                  History
                </button>
              </div>
            </td>
          </tr>
        ))}
      </Table>
      {open && <History name={open} />}
      <AccountBudgets accounts={data?.[0].data ?? []} plans={data?.[1].data ?? []} />
    </Page>
  )
}
