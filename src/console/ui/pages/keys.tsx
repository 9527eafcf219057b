/**
 * @module Keys: create (the secret shown once), disable/enable, rotate, revoke, unsuspend; each key's
 * refusals of the last 24 hours (`refusals.tsx`).
 */
import { useState } from 'preact/hooks'
import { api, apiAll, qs } from '../api.ts'
import { shortWhen, when } from '../format.ts'
import { ErrorNotice, TableHead } from '../parts.tsx'
import { useAction, useLoad } from './hooks.ts'
import { KeyLimitsEditor, LimitFields, limitsFromForm } from './key-limits.tsx'
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

export function Keys() {
  const [account, setAccount] = useState('')
  const { data, error, reload, setError } = useLoad(
    () =>
      Promise.all([
        apiAll(`/admin/v1/keys${qs({ account })}`),
        apiAll('/admin/v1/accounts'),
        api<RefusalList>('GET', `/admin/v1/refusals${qs({ account })}`),
      ]),
    [account],
  )
  const act = useAction(reload, setError)
  const [secret, setSecret] = useState<{ id: string; key: string; account: string } | null>(null)
  const [refusalsOf, setRefusalsOf] = useState('')
  const accounts: string[] = data?.[1].data.map((a: any) => a.name) ?? []
  const keys: any[] = data?.[0].data ?? []
  const refused = refusalsByKey(data?.[2].totals ?? [])
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
    <section aria-labelledby="h-keys">
      <h1 id="h-keys" tabIndex={-1}>
        Keys
      </h1>
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
      <div class="table-wrap">
        <table class="compact">
          <TableHead
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
          />
          <tbody>
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
          </tbody>
        </table>
      </div>
      <RefusalsPanel
        list={data?.[2]}
        keys={new Map(keys.map((k) => [k.id, { account: k.account, name: k.name }]))}
        keyId={refusalsOf}
        onKey={setRefusalsOf}
      />
      <KeyLimitsEditor keys={data?.[0].data ?? []} onSaved={reload} />
    </section>
  )
}
