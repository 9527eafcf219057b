/**
 * @module
 * Pages of the admin API's account and key lists, as the request log pages
 * (`GET /admin/v1/requests`): `limit` (1–200) and the previous page's `next_cursor` as `cursor`,
 * an opaque token; `next_cursor` is null on the last page. The default page is the largest, so
 * a client that asks for no page gets every row of a list of up to 200, as before pagination.
 *
 * @example
 * const first = await svc.accountsPage({ limit: '2' })
 * const next = await svc.accountsPage({ limit: '2', cursor: first.next_cursor ?? undefined })
 *
 * A store is asked for one row more than the page shows: that row, when there, says another page
 * follows (see `pageOf`).
 */
import type { AccountPage, KeyPage } from '../store/index.ts'
import { invalidValue } from '../util/errors.ts'

/** The most rows one page holds, and the page size when none is asked for. */
const MAX_LIST_PAGE = 200

export interface PageQuery {
  cursor?: string
  limit?: string
}

export interface ListPage<T> {
  object: 'list'
  data: T[]
  next_cursor: string | null
}

/** 400 for a `cursor` that no page of this list gave out. */
export const notACursor = () =>
  invalidValue('cursor', 'not a cursor from a previous page; start again without it')

/** `limit`: 1–{@link MAX_LIST_PAGE}; `fallback` when none is asked for. */
export function pageLimit(v: string | undefined, fallback = MAX_LIST_PAGE): number {
  if (v === undefined || v === '') return fallback
  const n = Number(v)
  if (!/^\d+$/.test(v) || n < 1 || n > MAX_LIST_PAGE)
    throw invalidValue('limit', `must be an integer from 1 to ${MAX_LIST_PAGE}`)
  return n
}

/** A cursor's text as a client carries it (base64url), and back (every paged list's, the request log's too). */
export const toCursor = (text: string) => Buffer.from(text).toString('base64url')
export const fromCursor = (v: string) => Buffer.from(v, 'base64url').toString()

/** Accounts after the one the cursor names (by id). */
export function accountPage(q: PageQuery): AccountPage {
  const limit = pageLimit(q.limit)
  if (q.cursor === undefined || q.cursor === '') return { afterId: 0, limit }
  const m = /^a\.(\d{1,15})$/.exec(fromCursor(q.cursor))
  if (!m) throw notACursor()
  return { afterId: Number(m[1]), limit }
}

export const accountCursor = (id: number) => toCursor(`a.${id}`)

/** Keys after the one the cursor names (by creation time, then id). */
export function keyPage(q: PageQuery): KeyPage {
  const limit = pageLimit(q.limit)
  if (q.cursor === undefined || q.cursor === '') return { after: null, limit }
  const m = /^k\.(\d{1,15})\.([A-Za-z0-9_-]{1,100})$/.exec(fromCursor(q.cursor))
  if (!m) throw notACursor()
  return { after: { createdAt: Number(m[1]), id: m[2]! }, limit }
}

export const keyCursor = (k: { createdAt: number; id: string }) => toCursor(`k.${k.createdAt}.${k.id}`)

/** The page of `rows` (read with `limit + 1`): the cursor names the last row shown. */
export function pageOf<R, T>(
  rows: R[],
  limit: number,
  view: (r: R) => T | Promise<T>,
  cursor: (r: R) => string,
): Promise<ListPage<T>> {
  const shown = rows.slice(0, limit)
  return Promise.all(shown.map(view)).then((data) => ({
    object: 'list' as const,
    data,
    next_cursor: rows.length > limit ? cursor(shown.at(-1)!) : null,
  }))
}
