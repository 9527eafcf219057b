/**
 * @module
 * A key's own limits in the keys page: the fields of the create form, and an editor for an
 * existing key (PATCH /admin/v1/keys/:id/limits). An empty field means "none" (the plan's alone
 * apply); the server refuses a limit above the account's plan with a message naming the field.
 */
import { useState } from 'preact/hooks'
import { BUDGET_PERIODS } from '../../../config/limit-settings.ts'
import { api } from '../api.ts'
import { ErrorNotice } from '../parts.tsx'
import { COUNTS, type LimitsView, limitsFromForm, limitsSummary } from './key-limits-form.ts'

/** The inputs, named `limit_*`, prefilled from `value`. */
export function LimitFields({ value, idPrefix }: { value?: LimitsView; idPrefix: string }) {
  return (
    <fieldset class="bar limits" aria-label="Key limits (empty = the plan's)">
      {COUNTS.map(([f, label]) => (
        <label for={`${idPrefix}-${f}`}>
          {label}
          <input
            id={`${idPrefix}-${f}`}
            name={`limit_${f}`}
            type="number"
            min={1}
            step={1}
            size={8}
            defaultValue={String(value?.[f] ?? '')}
          />
        </label>
      ))}
      <label for={`${idPrefix}-budget`}>
        Budget (USD)
        <input
          id={`${idPrefix}-budget`}
          name="limit_budget_usd"
          type="number"
          min={0.000001}
          step="any"
          size={8}
          defaultValue={String(value?.budget?.usd ?? '')}
        />
      </label>
      <label for={`${idPrefix}-period`}>
        per
        <select id={`${idPrefix}-period`} name="limit_budget_period">
          {BUDGET_PERIODS.map((p) => (
            <option selected={(value?.budget?.period ?? 'month') === p}>{p}</option>
          ))}
        </select>
      </label>
      <label for={`${idPrefix}-models`}>
        Models (ids, prefix/*, tier:NAME or *; comma-separated)
        <input
          id={`${idPrefix}-models`}
          name="limit_models"
          size={24}
          defaultValue={value?.models?.join(', ') ?? ''}
        />
      </label>
    </fieldset>
  )
}

/** Edit one key's limits: pick the key, change the fields, save. */
export function KeyLimitsEditor({ keys, onSaved }: { keys: any[]; onSaved: () => void }) {
  const live = keys.filter((k) => k.state !== 'revoked')
  const [id, setId] = useState('')
  const [error, setError] = useState('')
  const [saved, setSaved] = useState('')
  const key = live.find((k) => k.id === id) ?? live[0]
  if (!key) return null
  const save = async (e: Event) => {
    e.preventDefault()
    try {
      const body = limitsFromForm(new FormData(e.target as HTMLFormElement), true)
      const k = await api('PATCH', `/admin/v1/keys/${encodeURIComponent(key.id)}/limits`, body)
      setError('')
      setSaved(`Saved: ${limitsSummary(k.limits) || "none (the plan's apply)"}`)
      onSaved()
    } catch (err) {
      setSaved('')
      setError(err instanceof Error ? err.message : String(err))
    }
  }
  return (
    <section aria-labelledby="h-key-limits">
      <h2 id="h-key-limits">Limits of a key</h2>
      <form onSubmit={save} aria-label="Edit key limits" key={key.id} data-testid="key-limits-form">
        <div class="bar">
          <label>
            Key
            <select
              name="key"
              value={key.id}
              onChange={(e) => {
                setId((e.target as HTMLSelectElement).value)
                setSaved('')
              }}
            >
              {live.map((k) => (
                <option value={k.id}>
                  {k.id} ({k.account}
                  {k.name ? `, ${k.name}` : ''})
                </option>
              ))}
            </select>
          </label>
        </div>
        <LimitFields value={key.limits} idPrefix="edit-limit" />
        <button type="submit">Save limits</button>
        <span class="muted"> Within the account's plan; an empty field means none of the key's own.</span>
      </form>
      <ErrorNotice error={error} />
      {saved && (
        <p class="notice" role="status">
          {saved}
        </p>
      )}
    </section>
  )
}
