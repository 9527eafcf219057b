/**
 * @module
 * Maps bun:sqlite's errors (`code` like `SQLITE_BUSY`, `SQLITE_FULL`, `SQLITE_IOERR_WRITE`) onto
 * the store's own error classes.
 */
import { unavailableBy } from '../errors.ts'

/** The write lock (or, rarely, a WAL read lock) is held by another connection. */
export const isBusy = (err: unknown): boolean => {
  const c = String((err as { code?: unknown })?.code ?? '')
  return c.startsWith('SQLITE_BUSY') || c.startsWith('SQLITE_LOCKED')
}

/** A store failure a caller cannot fix by retrying its request, or null for other errors. */
export const unavailable = unavailableBy([
  { code: /^SQLITE_FULL$/, reason: 'disk_full', detail: () => 'the database disk is full' },
  {
    code: /^SQLITE_(IOERR|CANTOPEN|READONLY|CORRUPT|NOTADB)/,
    reason: 'io_error',
    detail: (code) => `database error ${code}`,
  },
])
