/**
 * @module
 * The operator's console: sign in with the admin token (exchanged for a session cookie; the page
 * never keeps the token), then one page per concern, picked from the URL's hash.
 */
import { render } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import { api } from './api.ts'
import { Accounts } from './pages/accounts.tsx'
import { Alerts } from './pages/alerts.tsx'
import { Keys } from './pages/keys.tsx'
import { Models } from './pages/models.tsx'
import { Overview } from './pages/overview.tsx'
import { Plans } from './pages/plans.tsx'
import { Requests } from './pages/requests.tsx'
import { Usage } from './pages/usage.tsx'
import { SignIn } from './sign-in.tsx'

const PAGES = [
  ['overview', 'Overview', Overview],
  ['accounts', 'Accounts', Accounts],
  ['keys', 'Keys', Keys],
  ['usage', 'Usage', Usage],
  ['requests', 'Request log', Requests],
  ['models', 'Models', Models],
  ['plans', 'Plans', Plans],
  ['alerts', 'Alerts', Alerts],
] as const

const current = () => {
  const h = location.hash.replace(/^#\/?/, '')
  return PAGES.some((p) => p[0] === h) ? h : 'overview'
}

function Shell({ onSignOut }: { onSignOut: () => void }) {
  const [page, setPage] = useState(current())
  const heading = useRef<HTMLDivElement>(null)
  useEffect(() => {
    const on = () => setPage(current())
    addEventListener('hashchange', on)
    return () => removeEventListener('hashchange', on)
  }, [])
  useEffect(() => {
    // Move focus to the new page so keyboard and screen-reader users land on it.
    heading.current?.querySelector('h1')?.focus()
  }, [page])
  const signOut = async () => {
    await api('DELETE', '/console/session').catch(() => {})
    onSignOut()
  }
  const Page = PAGES.find((p) => p[0] === page)![2]
  return (
    <div class="shell">
      <aside class="side">
        <span class="brand">Switchyard</span>
        <nav aria-label="Console pages">
          <ul>
            {PAGES.map(([id, label]) => (
              <li>
                <a href={`#/${id}`} aria-current={id === page ? 'page' : undefined}>
                  {label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="signout">
          <button type="button" class="secondary" onClick={signOut}>
            Sign out
          </button>
        </div>
      </aside>
      <main ref={heading as any} id="main">
        <Page />
      </main>
    </div>
  )
}

function App() {
  const [state, setState] = useState<'loading' | 'in' | 'out'>('loading')
  useEffect(() => {
    api('GET', '/console/session')
      .then(() => setState('in'))
      .catch(() => setState('out'))
    // A session that ends while the page is open (expiry, sign-out elsewhere) shows the sign-in.
    const onExpired = () => setState('out')
    addEventListener('console:signed-out', onExpired)
    return () => removeEventListener('console:signed-out', onExpired)
  }, [])
  if (state === 'loading') return <p class="boot">Loading the console…</p>
  if (state === 'out')
    return (
      <SignIn
        title="Switchyard console"
        label="Admin token"
        field="token"
        path="/console/session"
        autocomplete="current-password"
        onDone={() => setState('in')}
      >
        <p class="muted">
          The token is exchanged for a session cookie and not kept by this page. Key holders:{' '}
          <a href="/console/me">see your own usage</a>.
        </p>
      </SignIn>
    )
  return <Shell onSignOut={() => setState('out')} />
}

if (window.top !== window.self) document.body.textContent = 'The console cannot be shown inside a frame.'
else render(<App />, document.getElementById('app')!)
