/**
 * The console's pages and their script and style files, as served by the real gateway: each
 * carries `x-request-id` like every other answer (DESIGN §4) and leaves an access line, and each
 * carries a Content-Security-Policy strict enough to matter (no inline script, no eval, only its
 * own origin), nosniff, no referrer and no framing by another origin. In a real browser the console
 * runs under that policy without one violation, and a page elsewhere cannot frame it.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sharedChromium } from '../../support/browser.ts'
import { startGateway, type TestGateway, testConfigDoc } from '../../support/gateway.ts'
import { afterEach, beforeEach } from '../../support/hooks.ts'

const TOKEN = 'console-admin-token-0123456789-abcdefghij'
const SKIP = 'console CSP browser tests (test/e2e/console/console-page-headers.test.ts)'
const chromium = sharedChromium(SKIP)

let gw: TestGateway
let browser: any

beforeAll(async () => {
  gw = await startGateway({ doc: testConfigDoc({ admin: { token: TOKEN } }) })
})
afterAll(() => gw?.stop())

beforeEach(async () => {
  browser = await chromium.context()
})
afterEach(async () => {
  await browser?.close()
})

/** A page and every script and style file it names, fetched as a browser would. */
async function pageAndFiles(path: string): Promise<Array<{ url: string; res: Response }>> {
  const res = await fetch(`${gw.url}${path}`)
  const html = await res.clone().text()
  const refs = [...html.matchAll(/<(?:script|link)[^>]*(?:src|href)="([^"]+)"/g)]
    .map((m) => m[1]!)
    .filter((r) => !r.startsWith('data:'))
  expect(refs.length).toBeGreaterThanOrEqual(2) // its script and its styles
  const files = await Promise.all(
    refs.map(async (r) => ({
      url: new URL(r, `${gw.url}${path}`).href,
      res: await fetch(new URL(r, `${gw.url}${path}`)),
    })),
  )
  return [{ url: `${gw.url}${path}`, res }, ...files]
}

test('console pages and their files carry x-request-id, a strict CSP, nosniff, no framing and no referrer', async () => {
  for (const path of ['/console', '/console/me']) {
    for (const { url, res } of await pageAndFiles(path)) {
      const h = (name: string) => ({ url, [name]: res.headers.get(name) })
      expect({ url, status: res.status }).toEqual({ url, status: 200 })
      expect(h('x-request-id')['x-request-id']).toMatch(/^req_[0-9a-f]{32}$/)
      const csp = res.headers.get('content-security-policy') ?? ''
      expect({ url, csp }).toEqual({ url, csp: expect.stringContaining("frame-ancestors 'none'") })
      expect(csp).toContain("script-src 'self'")
      expect(csp).toContain("default-src 'none'")
      expect(csp).not.toContain('unsafe-inline')
      expect(csp).not.toContain('unsafe-eval')
      expect(h('x-content-type-options')).toEqual({ url, 'x-content-type-options': 'nosniff' })
      expect(h('x-frame-options')).toEqual({ url, 'x-frame-options': 'DENY' })
      expect(h('referrer-policy')).toEqual({ url, 'referrer-policy': 'no-referrer' })
      await res.arrayBuffer()
    }
  }
  await Bun.sleep(20) // the access lines of the last answers
  const access = gw.logs.filter((l) => l.includes('"msg":"access"') && l.includes('"surface":"console"'))
  expect(access.some((l) => l.includes('"path":"/console/assets/'))).toBe(true)
})

test('a console file is revalidated by its ETag; an unknown one is a 404 in OpenAI shape', async () => {
  const files = await pageAndFiles('/console')
  for (const { url, res } of files) {
    const again = await fetch(url, { headers: { 'if-none-match': res.headers.get('etag')! } })
    expect({ url, status: again.status }).toEqual({ url, status: 304 })
  }
  const missing = await fetch(`${gw.url}/console/assets/chunk-nothere.js`)
  expect(missing.status).toBe(404)
  expect(missing.headers.get('x-request-id')).toBeTruthy()
  expect(((await missing.json()) as any).error.code).toBe('not_found')
})

test('the console runs under its CSP without a violation on any page; another origin cannot frame it', async () => {
  if (!browser) return
  const page = await browser.newPage()
  const violations: string[] = []
  page.on('console', (m: any) => {
    if (/Content Security Policy/i.test(m.text())) violations.push(m.text())
  })
  // In the page (a string: the test's own types have no DOM): every violation the browser reports.
  await page.addInitScript(`
    window.__violations = []
    document.addEventListener('securitypolicyviolation', (e) =>
      window.__violations.push(e.violatedDirective + ' ' + e.blockedURI))
  `)
  await page.goto(`${gw.url}/console`)
  await page.getByLabel('Admin token').fill(TOKEN)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('heading', { name: 'Overview' }).waitFor()
  for (const name of ['Accounts', 'Keys', 'Usage', 'Request log', 'Models', 'Plans', 'Alerts', 'Overview']) {
    await page.getByRole('link', { name }).click()
    await page.getByRole('heading', { name }).first().waitFor()
  }
  // The charts draw (uPlot sets its styles through the CSSOM, which the policy allows).
  await page.locator('.uplot').first().waitFor()
  expect(await page.evaluate('window.__violations')).toEqual([])
  expect(violations).toEqual([])

  // A page on another origin (another port) that frames the console gets nothing.
  const other = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: () =>
      new Response(`<!doctype html><iframe id="f" src="${gw.url}/console"></iframe>`, {
        headers: { 'content-type': 'text/html' },
      }),
  })
  try {
    const framing = await browser.newPage()
    const refused: string[] = []
    framing.on('console', (m: any) => {
      if (/frame-ancestors|Refused to (display|frame)/i.test(m.text())) refused.push(m.text())
    })
    await framing.goto(`http://127.0.0.1:${other.port}/`)
    for (let i = 0; i < 100 && refused.length === 0; i++) await Bun.sleep(50)
    expect(refused.length).toBeGreaterThan(0)
    expect(await framing.frameLocator('#f').locator('input[name="token"]').count()).toBe(0)
  } finally {
    other.stop(true)
  }
}, 90_000)
