/** @module Loading state for a page: data, error, reload; a 401 sends the page back to sign-in. */
import { useCallback, useEffect, useState } from 'preact/hooks'
import { ApiError } from '../api.ts'

export function useLoad<T>(load: () => Promise<T>, deps: unknown[]) {
  const [data, setData] = useState<T | null>(null)
  const [error, setError] = useState('')
  const reload = useCallback(() => {
    load()
      .then((d) => {
        setData(d)
        setError('')
      })
      .catch((e) => {
        if (e instanceof ApiError && e.status === 401) dispatchEvent(new Event('console:signed-out'))
        setError(e instanceof Error ? e.message : String(e))
      })
  }, deps)
  useEffect(reload, [reload])
  return { data, error, reload, setError }
}

/** Runs an action, reports its error, then reloads. */
export function useAction(reload: () => void, setError: (s: string) => void) {
  return async (fn: () => Promise<unknown>) => {
    try {
      await fn()
      setError('')
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) dispatchEvent(new Event('console:signed-out'))
      setError(e instanceof Error ? e.message : String(e))
    }
    reload()
  }
}
