/**
 * Chromium for browser tests: Debian's /usr/bin/chromium driven by playwright-core from the test
 * clients package (test/clients). Returns null, after printing a plain line saying what is missing
 * and which tests are skipped, when either is absent.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from './config-doc.ts'

export const CHROMIUM = process.env.SWITCHYARD_CHROMIUM ?? '/usr/bin/chromium'
const PLAYWRIGHT = join(import.meta.dir, '../clients/node_modules/playwright-core/index.js')

/** `timezoneId` (IANA, e.g. `Asia/Kolkata`): the browser's own zone, whatever the machine's. */
export async function launchChromium(
  skipped: string,
  options: { timezoneId?: string } = {},
): Promise<any | null> {
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
  return chromium.launchPersistentContext(tempDir('switchyard-chromium-'), {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    viewport: { width: 1280, height: 860 },
    ...options,
  })
}
