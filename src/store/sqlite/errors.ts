/**
 * @module
 * Maps bun:sqlite's errors (`code` like `SQLITE_BUSY`, `SQLITE_FULL`, `SQLITE_IOERR_WRITE`) onto
 * the store's own error classes.
 */
import { StoreUnavailableError } from '../errors.ts'

const code = (err: unknown): string => String((err as { code?: unknown })?.code ?? '')

/** The write lock (or, rarely, a WAL read lock) is held by another connection. */
export const isBusy = (err: unknown): boolean => {
  const c = code(err)
  return c.startsWith('SQLITE_BUSY') || c.startsWith('SQLITE_LOCKED')
}

/** A store failure a caller cannot fix by retrying its request, or null for other errors. */
export function unavailable(err: unknown): StoreUnavailableError | null {
  const c = code(err)
  if (c === 'SQLITE_FULL') return new StoreUnavailableError('disk_full', 'the database disk is full')
  if (/^SQLITE_(IOERR|CANTOPEN|READONLY|CORRUPT|NOTADB)/.test(c))
    return new StoreUnavailableError('io_error', `database error ${c}`)
  return null
}
