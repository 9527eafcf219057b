/**
 * @module
 * The page's only way to the server: same-origin fetches with the session cookie. Errors carry
 * the gateway's message so the page can show it as it is.
 */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

export async function api<T = any>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(path, {
    method,
    credentials: 'same-origin',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  const json = text ? JSON.parse(text) : null
  if (!res.ok) {
    const e = json?.error ?? {}
    throw new ApiError(res.status, e.code ?? String(res.status), e.message ?? `HTTP ${res.status}`)
  }
  return json as T
}

/**
 * Every row of a paged admin list (`/admin/v1/accounts`, `/admin/v1/keys`): follows `next_cursor`
 * page after page. The tables, pickers and labels need the whole list, and a page holds at most 200.
 */
export async function apiAll<T = any>(path: string): Promise<{ object: 'list'; data: T[] }> {
  const data: T[] = []
  let cursor: string | null = null
  do {
    const sep = path.includes('?') ? '&' : '?'
    const page: { data: T[]; next_cursor?: string | null } = await api(
      'GET',
      cursor === null ? path : `${path}${sep}cursor=${encodeURIComponent(cursor)}`,
    )
    data.push(...page.data)
    // A cursor that does not move would loop for ever: stop instead.
    cursor = page.next_cursor && page.next_cursor !== cursor ? page.next_cursor : null
  } while (cursor !== null)
  return { object: 'list', data }
}

/** Query string from the set values only. */
export function qs(params: Record<string, string | number | undefined | null>): string {
  const p = new URLSearchParams()
  for (const [k, v] of Object.entries(params))
    if (v !== undefined && v !== null && v !== '') p.set(k, String(v))
  const s = p.toString()
  return s ? `?${s}` : ''
}
