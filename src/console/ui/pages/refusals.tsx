/**
 * @module
 * Refusals on the keys page (issue 22, finding 4): what the gateway refused each key before
 * admission in the last 24 hours — 429, 403 `model_not_in_plan`, 404, 400 … — so a customer's
 * "I keep getting 429" can be looked up. The request log holds admitted requests only; these
 * counts come from `GET /admin/v1/refusals` (per key, code and UTC hour in the store).
 */
import { num, shortWhen, when } from '../format.ts'
import { Table } from '../parts.tsx'

export interface RefusalTotal {
  key_id: string
  code: string
  status: number
  count: number
}

export interface RefusalHour extends RefusalTotal {
  hour: string
  account_id: number
}

export interface RefusalList {
  data: RefusalHour[]
  totals: RefusalTotal[]
}

interface KeyRefusals {
  count: number
  /** Most first, as the API sorts its totals. */
  codes: RefusalTotal[]
}

/** Each key's refusals: the total and its codes. */
export function refusalsByKey(totals: RefusalTotal[]): Map<string, KeyRefusals> {
  const out = new Map<string, KeyRefusals>()
  for (const t of totals) {
    const k = out.get(t.key_id) ?? { count: 0, codes: [] }
    k.count += t.count
    k.codes.push(t)
    out.set(t.key_id, k)
  }
  return out
}

const codeText = (t: RefusalTotal) => `${t.status} ${t.code} ×${t.count}`

/**
 * The keys table's cell: how many refusals and their statuses; the codes are in the title, and a
 * click shows them in the panel below.
 */
export function RefusedCell({
  keyId,
  refused,
  onShow,
}: {
  keyId: string
  refused: KeyRefusals | undefined
  onShow: (keyId: string) => void
}) {
  if (!refused) return <span class="muted">0</span>
  const statuses = [...new Set(refused.codes.map((c) => c.status))].join(' ')
  return (
    <button
      type="button"
      class="refused"
      data-testid="refused-count"
      title={`In the last 24 hours: ${refused.codes.map(codeText).join(', ')}`}
      aria-label={`${refused.count} refused (${refused.codes.map(codeText).join(', ')}); show them in the refusals panel`}
      onClick={() => onShow(keyId)}
    >
      {num(refused.count)} <span class="statuses">· {statuses}</span>
    </button>
  )
}

/** The last hour each key and code was refused in, from the hourly rows. */
function lastHours(rows: RefusalHour[]): Map<string, string> {
  const out = new Map<string, string>()
  for (const r of rows) {
    const id = `${r.key_id}\0${r.code}`
    const seen = out.get(id)
    if (!seen || r.hour > seen) out.set(id, r.hour)
  }
  return out
}

/**
 * Refusals per key and code over the keys shown (one account's or all), or one key's. `keys`
 * names each key for the table (its account and label).
 */
export function RefusalsPanel({
  list,
  keys,
  keyId,
  onKey,
}: {
  list: RefusalList | undefined
  keys: Map<string, { account: string; name: string | null }>
  keyId: string
  onKey: (keyId: string) => void
}) {
  const totals = (list?.totals ?? []).filter((t) => !keyId || t.key_id === keyId)
  const last = lastHours(list?.data ?? [])
  const refusedKeys = [...new Set((list?.totals ?? []).map((t) => t.key_id))]
  return (
    <section class="panel refusals" aria-labelledby="h-refusals" data-testid="refusals">
      <h2 id="h-refusals" tabIndex={-1}>
        Refusals, last 24 hours
      </h2>
      <p class="muted">
        Requests refused before admission with a valid key (429 over a limit, 403 model not in the plan, 404,
        400, 408, 413, 415), by key and code. Admitted requests are in the request log.
      </p>
      <form class="bar" aria-label="Refusals filter" onSubmit={(e) => e.preventDefault()}>
        <label>
          Refusals of
          <select value={keyId} onChange={(e) => onKey((e.target as HTMLSelectElement).value)}>
            <option value="">every key shown</option>
            {[...new Set([keyId, ...refusedKeys])].filter(Boolean).map((id) => (
              <option value={id}>{keys.get(id)?.name ? `${id} (${keys.get(id)?.name})` : id}</option>
            ))}
          </select>
        </label>
      </form>
      {totals.length === 0 ? (
        <p class="muted">
          {keyId ? 'No refusals for this key in the last 24 hours.' : 'No refusals in the last 24 hours.'}
        </p>
      ) : (
        <Table
          compact
          cols={['key', 'account', 'status', 'code', 'count', 'last seen (hour)']}
          num={['count']}
        >
          {totals.map((t) => {
            const hour = last.get(`${t.key_id}\0${t.code}`)
            return (
              <tr data-refusal={`${t.key_id} ${t.code}`}>
                <td>
                  <code>{t.key_id}</code>
                </td>
                <td>{keys.get(t.key_id)?.account ?? '—'}</td>
                <td>
                  <span class={`badge ${t.status === 429 ? 'warn' : 'bad'}`}>{t.status}</span>
                </td>
                <td>
                  <code>{t.code}</code>
                </td>
                <td class="num">{num(t.count)}</td>
                <td title={when(hour)}>{shortWhen(hour)}</td>
              </tr>
            )
          })}
        </Table>
      )}
    </section>
  )
}
