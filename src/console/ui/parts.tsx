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
