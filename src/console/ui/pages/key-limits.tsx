/**
 * @module
 * A key's own limits in the keys page: the fields of the create form, and an editor for an
 * existing key (PATCH /admin/v1/keys/:id/limits). An empty field means "none" (the plan's alone
 * apply); the server refuses a limit above the account's plan with a message naming the field.
 */
import { useState } from 'preact/hooks'
import { api } from '../api.ts'
import { usd } from '../money.ts'
import { ErrorNotice } from '../parts.tsx'

const COUNTS = [
  ['rpm', 'Requests/min'],
  ['rpd', 'Requests/day'],
  ['tpm', 'Tokens/min'],
  ['tpd', 'Tokens/day'],
] as const

export interface LimitsView {
  rpm: number | null
  rpd: number | null
  tpm: number | null
  tpd: number | null
  budget: { usd: number; period: string } | null
  models: string[] | null
}

/** One line for the table: `tpm 5,000 · $2.00/day · 1 model`, or nothing. */
export function limitsSummary(l: LimitsView | undefined): string {
  if (!l) return ''
  const parts: string[] = []
  for (const [f] of COUNTS) if (l[f] !== null) parts.push(`${f} ${l[f]!.toLocaleString('en-US')}`)
  if (l.budget) parts.push(`${usd(l.budget.usd)}/${l.budget.period}`)
  if (l.models) parts.push(l.models.join(', '))
  return parts.join(' · ')
}

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
          {['day', 'week', 'month'].map((p) => (
            <option selected={(value?.budget?.period ?? 'month') === p}>{p}</option>
          ))}
        </select>
      </label>
      <label for={`${idPrefix}-models`}>
        Models (ids, comma-separated)
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

/**
 * The limits a form's fields set, as the admin API takes them. `clear`: an empty field is sent as
 * null (editing: clears it); otherwise it is left out (creating: nothing to clear).
 */
export function limitsFromForm(f: FormData, clear: boolean): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {}
  const text = (k: string) => String(f.get(k) ?? '').trim()
  for (const [k] of COUNTS) {
    const v = text(`limit_${k}`)
    if (v) out[k] = Number(v)
    else if (clear) out[k] = null
  }
  const amount = text('limit_budget_usd')
  if (amount) out.budget = { usd: Number(amount), period: text('limit_budget_period') }
  else if (clear) out.budget = null
  const models = text('limit_models')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  if (models.length) out.models = models
  else if (clear) out.models = null
  return Object.keys(out).length ? out : undefined
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
