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

/** A compact time for a table cell (the full one in its title): the time alone when it is today. */
export function shortWhen(iso: string | null | undefined, now = new Date()): string {
  if (!iso) return '—'
  const d = new Date(iso)
  const today = d.toDateString() === now.toDateString()
  return today
    ? d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' })
    : d.toLocaleDateString(undefined, { day: 'numeric', month: 'short', year: '2-digit' })
}
