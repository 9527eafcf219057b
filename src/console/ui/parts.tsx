/** @module Pieces the console's pages show the same way. */
import type { ComponentChildren } from 'preact'
import { ms, num, statusClass } from './format.ts'

/**
 * One of the operator's pages: a section named by its heading, which takes the focus when the page
 * opens (`tabIndex` -1), so a screen reader announces it.
 */
export function Page({ id, title, children }: { id: string; title: string; children: ComponentChildren }) {
  return (
    <section aria-labelledby={`h-${id}`}>
      <h1 id={`h-${id}`} tabIndex={-1}>
        {title}
      </h1>
      {children}
    </section>
  )
}

/** A panel of the overview: a section named by its heading; `wide` spans the grid's width. */
export function Panel({
  id,
  title,
  wide,
  children,
}: {
  id: string
  title: string
  wide?: boolean
  children: ComponentChildren
}) {
  return (
    <section aria-labelledby={`h-${id}`} class={wide ? 'panel wide' : 'panel'}>
      <h2 id={`h-${id}`}>{title}</h2>
      {children}
    </section>
  )
}

/** A failed load or action, announced to screen readers; nothing when there is none. */
export function ErrorNotice({ error }: { error: string | null | undefined }) {
  if (!error) return null
  return (
    <p class="notice error" role="alert">
      {error}
    </p>
  )
}

/**
 * A table's column headers; the ones named in `num` hold numbers and are right-aligned; `end`
 * (a row's actions) stays in view at the right edge when the table scrolls sideways.
 */
export function TableHead({ cols, num = [], end }: { cols: string[]; num?: string[]; end?: string }) {
  return (
    <thead>
      <tr>
        {cols.map((c) => (
          <th scope="col" class={num.includes(c) ? 'num' : c === end ? 'sticky-end' : undefined}>
            {c}
          </th>
        ))}
      </tr>
    </thead>
  )
}

/**
 * A table in a box that scrolls sideways: its headers (`TableHead`) and its rows. `compact` for
 * the dense tables of the overview and the lists.
 */
export function Table({
  compact,
  testid,
  describedBy,
  cols,
  num,
  end,
  children,
}: {
  compact?: boolean
  testid?: string
  describedBy?: string
  cols: string[]
  num?: string[]
  end?: string
  children: ComponentChildren
}) {
  return (
    <div class="table-wrap">
      <table class={compact ? 'compact' : undefined} data-testid={testid} aria-describedby={describedBy}>
        <TableHead cols={cols} num={num} end={end} />
        <tbody>{children}</tbody>
      </table>
    </div>
  )
}

/** A key's two cells: its name (the id when it has none, and on hover) and its account. */
export function KeyCells({
  k,
}: {
  k: { key_id: string; key_name?: string | null; account?: string | null }
}) {
  return (
    <>
      <td>
        <span class="clip" title={k.key_id}>
          {k.key_name ?? k.key_id}
        </span>
      </td>
      <td>{k.account ?? '—'}</td>
    </>
  )
}

/** A logged request's status, latency and tokens (marked when the gateway estimated them). */
export function OutcomeCells({
  r,
}: {
  r: { status: number | null; latency_ms: number | null; total_tokens: number | null; estimated?: boolean }
}) {
  return (
    <>
      <td class="num">
        <span class={`badge ${statusClass(r.status)}`}>{r.status ?? '…'}</span>
      </td>
      <td class="num">{ms(r.latency_ms)}</td>
      <td class="num">
        {num(r.total_tokens)}
        <EstimatedMark estimated={r.estimated} />
      </td>
    </>
  )
}

/**
 * Beside a request's tokens: the upstream sent no usage, so its tokens and cost are the gateway's
 * settled estimate (DESIGN §11 "One ledger"). Nothing otherwise.
 */
export function EstimatedMark({ estimated }: { estimated: boolean | undefined }) {
  if (!estimated) return null
  return (
    <small class="muted" data-testid="estimated" title="Estimated by the gateway: no usage from the upstream">
      {' '}
      estimated
    </small>
  )
}

/**
 * Newer / Older over a cursor-paged list (`cursors`: the pages walked, the current one last, the
 * first ''), the page number, and a Refresh button when `onRefresh` is given.
 */
export function Pager({
  cursors,
  setCursors,
  next,
  onRefresh,
}: {
  cursors: string[]
  setCursors: (c: string[]) => void
  next: string | null | undefined
  onRefresh?: () => void
}) {
  return (
    <div class="pager">
      <button
        type="button"
        class="secondary"
        disabled={cursors.length < 2}
        onClick={() => setCursors(cursors.slice(0, -1))}
      >
        Newer
      </button>
      <button
        type="button"
        class="secondary"
        disabled={!next}
        onClick={() => next && setCursors([...cursors, next])}
      >
        Older
      </button>
      {onRefresh && (
        <button type="button" class="secondary" onClick={onRefresh}>
          Refresh
        </button>
      )}
      <span class="muted">page {cursors.length}</span>
    </div>
  )
}
