/** @module Pieces the console's pages show the same way. */

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
