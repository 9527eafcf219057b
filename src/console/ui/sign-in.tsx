/**
 * @module
 * The sign-in both pages open with: a secret posted once to its session route and exchanged for
 * a session cookie; the page clears the field and never keeps the secret.
 */
import type { ComponentChildren } from 'preact'
import { useState } from 'preact/hooks'
import { ApiError, api } from './api.ts'

export interface SignInProps {
  title: string
  /** The field's label. */
  label: string
  /** The field's name, and the body field the session route takes. */
  field: 'token' | 'key'
  /** The session route (POST). */
  path: string
  autocomplete: string
  placeholder?: string
  onDone: () => void
  /** What is said below the form. */
  children: ComponentChildren
}

export function SignIn({
  title,
  label,
  field,
  path,
  autocomplete,
  placeholder,
  onDone,
  children,
}: SignInProps) {
  const [error, setError] = useState('')
  const [busy, setBusy] = useState(false)
  const submit = async (e: Event) => {
    e.preventDefault()
    const input = (e.target as HTMLFormElement).elements.namedItem(field) as HTMLInputElement
    setBusy(true)
    setError('')
    try {
      await api('POST', path, { [field]: input.value })
      input.value = ''
      onDone()
    } catch (err) {
      setError(err instanceof ApiError ? err.message : 'Could not reach the gateway.')
    } finally {
      setBusy(false)
    }
  }
  return (
    <main class="signin">
      <h1>{title}</h1>
      <form onSubmit={submit}>
        <label class="field">
          {label}
          <input
            name={field}
            type="password"
            autocomplete={autocomplete}
            required
            placeholder={placeholder}
          />
        </label>
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        <p role="alert" class={error ? 'notice error' : 'sr-only'}>
          {error}
        </p>
      </form>
      {children}
    </main>
  )
}
