/**
 * @module Keys: create (the secret shown once), disable/enable, rotate, revoke, unsuspend; each key's
 * own limits and its settled spend today and this month beside its budget (GET
 * /admin/v1/overview/spend); its refusals of the last 24 hours (`refusals.tsx`).
 */
import { useState } from 'preact/hooks'
import { api, apiAll, qs } from '../api.ts'
import { shortWhen, when } from '../format.ts'
import { usd } from '../money.ts'
import { ErrorNotice, Page, Table } from '../parts.tsx'
import { useAction, useLoad } from './hooks.ts'
import { KeyLimitsEditor, LimitFields } from './key-limits.tsx'
import { limitsFromForm, limitsSummary } from './key-limits-form.ts'
import { BudgetBurn, CacheTokens } from './overview-money.tsx'
import { type RefusalList, RefusalsPanel, RefusedCell, refusalsByKey } from './refusals.tsx'

/** The new secret, shown until dismissed; then it exists nowhere on the page. */
function Secret({
  secret,
  onClose,
}: {
  secret: { id: string; key: string; account: string }
  onClose: () => void
}) {
  const [copied, setCopied] = useState(false)
  return (
    <div class="secret" role="alertdialog" aria-labelledby="secret-title" aria-describedby="secret-help">
      <h2 id="secret-title">New key for {secret.account}</h2>
      <p id="secret-help">Copy it now: it is shown only this once and cannot be shown again.</p>
      <code data-testid="new-secret">{secret.key}</code>
      <div class="actions">
        <button
          type="button"
          onClick={async () => {
            await navigator.clipboard?.writeText(secret.key).catch(() => {})
            setCopied(true)
          }}
        >
          {copied ? 'Copied' : 'Copy'}
        </button>
        <button type="button" class="secondary" onClick={onClose}>
          I have stored it — close
        </button>
      </div>
    </div>
  )
}

/**
 * Each key's own limits and its settled spend today and this month (UTC), this month's
 * prompt-cache tokens (read and written), beside its budget's burn: a table of its own under the keys, which keeps the keys table (and its buttons) within
 * 1280 px. A key that spent nothing this month is absent from the spend list: $0.
 */
function KeyLimitsAndSpend({ keys, spend }: { keys: any[]; spend: Map<string, any> }) {
  return (
    <section aria-labelledby="h-key-spend">
      <h2 id="h-key-spend">Limits and spend</h2>
      <p class="muted">
        Each key's own limits (within its plan's), its settled spend and the prompt tokens its providers'
        caches read and wrote; UTC days and months.
      </p>
      <Table
        compact
        testid="key-spend"
        cols={['key', 'account', 'limits', 'today', 'month', 'cached', 'budget']}
        num={['today', 'month']}
      >
        {keys.map((k: any) => {
          const s = spend.get(k.id)
          const budget = k.limits?.budget ?? null
          const burn = s?.budget ?? (budget ? { ...budget, spent_usd: 0, used: 0, resets_at: '' } : null)
          return (
            <tr data-key-spend={k.id}>
              <td>
                <span class="clip" title={k.id}>
                  {k.name ?? k.id}
                </span>
              </td>
              <td>{k.account}</td>
              <td data-col="limits">{limitsSummary(k.limits) || <span class="muted">the plan's</span>}</td>
              <td class="num" data-col="today">
                {usd(s?.today_usd ?? 0)}
              </td>
              <td class="num" data-col="month">
                {usd(s?.month_usd ?? 0)}
              </td>
              <td data-col="cached">
                <CacheTokens row={s} />
              </td>
              <td data-col="budget">{burn ? <BudgetBurn budget={burn} /> : <span class="muted">—</span>}</td>
            </tr>
          )
        })}
      </Table>
    </section>
  )
}

export function Keys() {
  const [account, setAccount] = useState('')
  const { data, error, reload, setError } = useLoad(
    () =>
      Promise.all([
        apiAll(`/admin/v1/keys${qs({ account })}`),
        apiAll('/admin/v1/accounts'),
        api<RefusalList>('GET', `/admin/v1/refusals${qs({ account })}`),
        api('GET', `/admin/v1/overview/spend${qs({ account })}`),
      ]),
    [account],
  )
  const act = useAction(reload, setError)
  const [secret, setSecret] = useState<{ id: string; key: string; account: string } | null>(null)
  const [refusalsOf, setRefusalsOf] = useState('')
  const accounts: string[] = data?.[1].data.map((a: any) => a.name) ?? []
  const keys: any[] = data?.[0].data ?? []
  const refused = refusalsByKey(data?.[2].totals ?? [])
  const spend = new Map<string, any>((data?.[3].keys ?? []).map((k: any) => [k.key_id, k]))
  const showRefusals = (id: string) => {
    setRefusalsOf(id)
    document.getElementById('h-refusals')?.focus()
  }
  const create = (e: Event) => {
    e.preventDefault()
    const form = e.target as HTMLFormElement
    const f = new FormData(form)
    act(async () => {
      const k = await api('POST', '/admin/v1/keys', {
        account: f.get('account'),
        name: f.get('name') || undefined,
        limits: limitsFromForm(f, false),
      })
      setSecret(k)
      form.reset()
    })
  }
  const post = (id: string, op: string) =>
    act(() => api('POST', `/admin/v1/keys/${encodeURIComponent(id)}/${op}`))
  return (
    <Page id="keys" title="Keys">
      {secret && <Secret secret={secret} onClose={() => setSecret(null)} />}
      <form class="bar" onSubmit={create} aria-label="Create a key">
        <label>
          Account
          <select name="account" required>
            {accounts.map((a) => (
              <option selected={a === account}>{a}</option>
            ))}
          </select>
        </label>
        <label>
          Label (optional)
          <input name="name" maxLength={200} />
        </label>
        <LimitFields idPrefix="new-limit" />
        <button type="submit" disabled={!accounts.length}>
          Create key
        </button>
      </form>
      <form class="bar" aria-label="Key filter" onSubmit={(e) => e.preventDefault()}>
        <label>
          Show keys of
          <select
            value={account}
            onChange={(e) => {
              setAccount((e.target as HTMLSelectElement).value)
              setRefusalsOf('')
            }}
          >
            <option value="">all accounts</option>
            {accounts.map((a) => (
              <option>{a}</option>
            ))}
          </select>
        </label>
      </form>
      <ErrorNotice error={error} />
      <Table
        compact
        cols={[
          'id',
          'account',
          'label',
          'prefix',
          'state',
          'created',
          'last used',
          // Only when a key shown was refused: the table is at its width at 1280 px.
          ...(refused.size > 0 ? ['refused'] : []),
          'actions',
        ]}
        end="actions"
      >
        {keys.map((k: any) => (
          <tr data-key={k.id}>
            <td>
              <code>{k.id}</code>
            </td>
            <td>{k.account}</td>
            <td>
              <span class="clip" title={k.name ?? undefined}>
                {k.name ?? '—'}
              </span>
            </td>
            <td>
              <code>{k.prefix}…</code>
            </td>
            <td>
              {k.state === 'enabled' && k.suspended_until ? (
                <span class="badge warn" title={`suspended until ${when(k.suspended_until)}`}>
                  suspended
                </span>
              ) : (
                <span class={`badge ${k.state === 'enabled' ? 'ok' : 'bad'}`}>{k.state}</span>
              )}
            </td>
            <td title={when(k.created_at)}>{shortWhen(k.created_at)}</td>
            <td title={when(k.last_used_at)}>{shortWhen(k.last_used_at)}</td>
            {refused.size > 0 && (
              <td>
                <RefusedCell keyId={k.id} refused={refused.get(k.id)} onShow={showRefusals} />
              </td>
            )}
            <td class="sticky-end">
              {k.state !== 'revoked' && (
                <div class="actions nowrap">
                  <button
                    type="button"
                    class={k.state === 'enabled' ? 'danger' : 'secondary'}
                    onClick={() => post(k.id, k.state === 'enabled' ? 'disable' : 'enable')}
                  >
                    {k.state === 'enabled' ? 'Disable' : 'Enable'}
                  </button>
                  <button
                    type="button"
                    class="secondary"
                    onClick={() =>
                      act(async () => {
                        if (!confirm(`Rotate key ${k.id}? The current secret stops working now.`)) return
                        setSecret(await api('POST', `/admin/v1/keys/${encodeURIComponent(k.id)}/rotate`))
                      })
                    }
                  >
                    Rotate
                  </button>
                  <button
                    type="button"
                    class="danger"
                    onClick={() => confirm(`Revoke key ${k.id} for good?`) && post(k.id, 'revoke')}
                  >
                    Revoke
                  </button>
                  {k.suspended_until && (
                    <button type="button" class="secondary" onClick={() => post(k.id, 'unsuspend')}>
                      Unsuspend
                    </button>
                  )}
                </div>
              )}
            </td>
          </tr>
        ))}
      </Table>
      <KeyLimitsAndSpend keys={keys} spend={spend} />
      <RefusalsPanel
        list={data?.[2]}
        keys={new Map(keys.map((k) => [k.id, { account: k.account, name: k.name }]))}
        keyId={refusalsOf}
        onKey={setRefusalsOf}
      />
      <KeyLimitsEditor keys={data?.[0].data ?? []} onSaved={reload} />
    </Page>
  )
}
