/** @module Number and time formatting for the console pages. */

const nf = new Intl.NumberFormat('en-US')

export const num = (n: number | null | undefined) => (n === null || n === undefined ? '—' : nf.format(n))

export function when(iso: string | null | undefined): string {
  if (!iso) return '—'
  const d = new Date(iso)
  return d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' })
}

export const ms = (n: number | null | undefined) =>
  n === null || n === undefined ? '—' : `${nf.format(n)} ms`

/** datetime-local input value → ISO (the browser's time zone), or undefined. */
export const localToIso = (v: string) => (v ? new Date(v).toISOString() : undefined)

export function statusClass(status: number | null): string {
  if (status === null) return 'warn'
  return status < 400 ? 'ok' : 'bad'
}
