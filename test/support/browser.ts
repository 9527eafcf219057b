/**
 * Chromium for browser tests: Debian's Chromium driven by playwright-core from the test clients
 * package (test/clients). Returns null, after printing a plain line saying what is missing and
 * which tests are skipped, when either is absent.
 */

import { afterAll } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { SUITE_TIMEOUT_MS } from './hooks.ts'

/**
 * Debian's `chromium-headless-shell` when it is installed (.ci/run installs it), else its
 * `chromium`. Both are the same Chromium (156: the same Blink, V8 and network stack, one source
 * package); the shell is the old headless mode, a browser with no UI of its own, where `chromium
 * --headless` is the whole browser run without a screen: a window for every playwright context,
 * its UI's WebUI pages in renderers of their own. The tests read the page only (its DOM, cookies,
 * viewport, screenshots), never the browser's UI, so the shell runs the same tests with less work:
 * the ten browser files in one process, Chromium's CPU 67.4 → 45.7 CPU-s (browser59, 2026-11-30)
 * and the same again this stop (docs/benchmarks/suite-cpu.md, stop 62).
 */
export const CHROMIUM =
  process.env.SWITCHYARD_CHROMIUM ??
  (existsSync('/usr/bin/chromium-headless-shell') ? '/usr/bin/chromium-headless-shell' : '/usr/bin/chromium')
const PLAYWRIGHT = join(import.meta.dir, '../clients/node_modules/playwright-core/index.js')

/**
 * One Chromium per test process, launched by the first `context()` of any file and left running
 * for the next: `npm test` runs with `--no-isolate`, so the files a worker runs share this module,
 * and a launch (~1 s of CPU, Chromium's processes included, and 1–2.5 s of wall on this machine
 * at load 15–22: ten browser files in one process 80.5 → 70.6 CPU-s, 2026-11-29) is paid once a
 * worker rather than once a file. playwright kills the browsers it launched when the
 * process exits. Under `--isolate` each file gets a fresh global (globalThis, process.env and
 * this module alike: checked with two browser files, the second launched its own while the
 * first's Chromium was still running), so nothing can carry the browser to the next file: there
 * each file closes its own when it ends rather than leaving one Chromium a file alive until the
 * process exits. (Bun.argv does not show the flag; the process's command line does, test workers'
 * included.)
 */
let shared: Promise<any | null> | undefined
const ISOLATED = (() => {
  try {
    return readFileSync('/proc/self/cmdline', 'utf8').split('\0').includes('--isolate')
  } catch {
    return false
  }
})()

/**
 * A fresh browser context a test (cookies, storage and cache of its own, as a new profile's), so
 * tests stay as isolated as with a browser each; a context costs a few milliseconds. Call at the
 * top level of the file: its `afterAll` closes every context the file opened and left open, so
 * nothing of one file's pages reaches the next file's. `context()` returns null, after the
 * printed line, when Chromium or playwright-core is missing.
 *
 * `timezoneId` (IANA, e.g. `Asia/Kolkata`): the context's own zone, whatever the machine's.
 */
export function sharedChromium(skipped: string): {
  context(options?: { timezoneId?: string }): Promise<any | null>
  tab(): Promise<any | null>
} {
  const opened = new Set<any>()
  let told = false
  let fileTab: Promise<any | null> | undefined
  afterAll(async () => {
    await Promise.all([...opened].map((c) => c.close().catch(() => {})))
    if (ISOLATED && shared) await (await shared.catch(() => null))?.close().catch(() => {})
  }, SUITE_TIMEOUT_MS)
  return {
    async context(options = {}) {
      const b = await browser()
      if (!b) {
        if (!told) console.log(`SKIPPED: ${skipped} — ${missing()}`)
        told = true
        return null
      }
      const context = await b.newContext({ viewport: { width: 1280, height: 860 }, ...options })
      opened.add(context)
      context.on('close', () => opened.delete(context))
      return context
    },
    /**
     * The file's one tab (in a context of its own, at 1280 px), handed to each caller on a blank
     * page with no cookie: for tests that run one after another and sign in by a form, as in a
     * browser of their own — the console keeps nothing but its session cookie (no storage) —
     * without a context and a tab apiece. A tab starts a renderer of its own: ~1 CPU-s on this
     * host, the browser's side included (2026-11-30). Null, as `context()`, without Chromium.
     */
    async tab() {
      fileTab ??= this.context().then((c) => c?.newPage() ?? null)
      const page = await fileTab
      if (!page) return null
      await page.context().clearCookies()
      await page.setViewportSize({ width: 1280, height: 860 })
      await page.goto('about:blank')
      return page
    },
  }
}

/** The process's Chromium, launched on first use; a failed launch is tried again by the next call. */
function browser(): Promise<any | null> {
  if (shared) return shared
  const launched = launch()
  shared = launched
  launched.catch(() => {
    if (shared === launched) shared = undefined
  })
  return launched
}

function missing(): string | null {
  return !existsSync(CHROMIUM)
    ? `${CHROMIUM} not found (apt-get install chromium-headless-shell, or chromium)`
    : !existsSync(PLAYWRIGHT)
      ? 'playwright-core not installed (npm install --prefix test/clients)'
      : null
}

/**
 * The omnibox's popup, which a headless browser never shows: Chromium 156 preloads it in every
 * window (playwright opens one a context) as two WebUI pages, `chrome://omnibox-popup.top-chrome/`
 * and its AI-mode page, in a renderer of their own that also follows the tab's navigations —
 * ~2.2 CPU-s a console visit (a context, a tab, sign-in, two pages: 5.3 → 3.1 CPU-s, 2026-11-30).
 * No test reads the browser's own UI: pages, cookies and the viewport are the page's.
 */
const UNSEEN_UI = ['WebUIOmniboxPopup', 'WebUIOmniboxAimPopup', 'WebUIOmniboxFullPopup']

/**
 * playwright-core's own `--disable-features` list (its chromiumSwitches.ts, 1.65.1). Chromium
 * honours only the last `--disable-features` on its command line, so ours repeats playwright's
 * before adding UNSEEN_UI; another playwright-core version may have another list, and launch()
 * says so rather than drop it unseen.
 */
const PLAYWRIGHT_VERSION = '1.65.1'
const PLAYWRIGHT_DISABLED = [
  'AvoidUnnecessaryBeforeUnloadCheckSync',
  'DestroyProfileOnBrowserClose',
  'HttpsUpgrades',
  'HttpsFirstBalancedModeAutoEnable',
  'LensOverlay',
  'MediaRouter',
  'PaintHolding',
  'ThirdPartyStoragePartitioning',
  'AvoidCorsURLLoaderRestartOnRedirect',
  'TcpPortRandomizationWin',
  'OptimizationHints',
  'NetworkTimeServiceQuerying',
  'AimEnabled',
  'PreconnectToSearch',
  'msForceBrowserSignIn',
  'msEdgeUpdateLaunchServicesPreferredVersion',
]

async function launch(): Promise<any | null> {
  if (missing()) return null
  const version = JSON.parse(readFileSync(join(PLAYWRIGHT, '../package.json'), 'utf8')).version
  if (version !== PLAYWRIGHT_VERSION)
    throw new Error(
      `playwright-core ${version}, not ${PLAYWRIGHT_VERSION}: copy its --disable-features list (chromiumSwitches) into PLAYWRIGHT_DISABLED in test/support/browser.ts`,
    )
  // Typed loosely: the product's type-check must not depend on the optional test package.
  const { chromium } = (await import(PLAYWRIGHT)) as { chromium: any }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      // Software compositing: with no GPU, Chromium otherwise composites by GL emulated on the
      // CPU (SwiftShader, which playwright enables): ~10 % of a console visit's CPU (3.4 → 3.0
      // CPU-s, four rounds each). Pages, the uPlot 2D canvases and screenshots draw the same;
      // nothing in the console uses WebGL, the one thing the SwiftShader fallback is for.
      '--disable-gpu-compositing',
      '--disable-software-rasterizer',
      `--disable-features=${[...PLAYWRIGHT_DISABLED, ...UNSEEN_UI].join(',')}`,
    ],
  })
}
