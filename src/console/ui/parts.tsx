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

/** A table's column headers; the ones named in `num` hold numbers and are right-aligned. */
export function TableHead({ cols, num = [] }: { cols: string[]; num?: string[] }) {
  return (
    <thead>
      <tr>
        {cols.map((c) => (
          <th scope="col" class={num.includes(c) ? 'num' : undefined}>
            {c}
          </th>
        ))}
      </tr>
    </thead>
  )
}
