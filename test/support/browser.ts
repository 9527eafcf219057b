/**
 * Chromium for browser tests: Debian's /usr/bin/chromium driven by playwright-core from the test
 * clients package (test/clients). Returns null, after printing a plain line saying what is missing
 * and which tests are skipped, when either is absent.
 */

import { afterAll } from 'bun:test'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { SUITE_TIMEOUT_MS } from './hooks.ts'

export const CHROMIUM = process.env.SWITCHYARD_CHROMIUM ?? '/usr/bin/chromium'
const PLAYWRIGHT = join(import.meta.dir, '../clients/node_modules/playwright-core/index.js')

/**
 * One Chromium per test file, launched on the first `context()` and closed when the file ends
 * (`afterAll`, registered here: call `chromiumPerFile` at the top level of the file). Each
 * `context()` is a fresh browser context (cookies, storage and cache of its own, as a new
 * profile's), so tests stay as isolated as with a browser each; a launch costs ~0.85 s of CPU and
 * 2 s on this machine, a context a few milliseconds (measured 2026-11-29). `context()` returns
 * null, after the printed line, when Chromium or playwright-core is missing.
 *
 * `timezoneId` (IANA, e.g. `Asia/Kolkata`): the context's own zone, whatever the machine's.
 */
export function chromiumPerFile(skipped: string): {
  context(options?: { timezoneId?: string }): Promise<any | null>
} {
  let browser: Promise<any | null> | undefined
  afterAll(async () => {
    await (await browser?.catch(() => null))?.close()
  }, SUITE_TIMEOUT_MS)
  return {
    async context(options = {}) {
      browser ??= launch(skipped)
      // A failed launch is tried again by the next test (and reported there).
      browser.catch(() => {
        browser = undefined
      })
      const b = await browser
      return b ? b.newContext({ viewport: { width: 1280, height: 860 }, ...options }) : null
    },
  }
}

async function launch(skipped: string): Promise<any | null> {
  const missing = !existsSync(CHROMIUM)
    ? `${CHROMIUM} not found (apt-get install chromium)`
    : !existsSync(PLAYWRIGHT)
      ? 'playwright-core not installed (npm install --prefix test/clients)'
      : null
  if (missing) {
    console.log(`SKIPPED: ${skipped} — ${missing}`)
    return null
  }
  // Typed loosely: the product's type-check must not depend on the optional test package.
  const { chromium } = (await import(PLAYWRIGHT)) as { chromium: any }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  })
}
