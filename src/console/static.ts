/**
 * @module
 * The console's pages and their script and style files, served by the app rather than by Bun's
 * own HTML routes: Bun answers those before the app sees the request, so they carried no
 * `x-request-id`, left no access line and could carry none of the headers a page that holds an
 * admin session needs (`PAGE_HEADERS`).
 *
 * A page is built once, on its first request: from the files `bun build --compile` embedded in
 * the executable (`HTMLBundle.files`), or, run from source, by `Bun.build` on the page's HTML.
 * Its scripts and styles are served at `/console/assets/<name>` (names hold a content hash, so
 * they are cached for good); the page names them there.
 *
 * @example
 * const pages = consoleStatic()
 * new Elysia().get('/console', ({ request }) => pages.page(adminPage, request))
 */
import { basename } from 'node:path'
import type { HTMLBundle } from 'bun'

/** Where a page's script and style files are served. */
export const ASSETS_PATH = '/console/assets'

/**
 * What the console loads: its own script and styles, `fetch` to its own origin, the icon inline
 * (`data:`). No inline script or style element, no eval, no frames, no plugins; no page elsewhere
 * may frame it (clickjacking), and a form posts only here. Preact's and uPlot's styles are set
 * through the CSSOM (`element.style`), which `style-src` does not govern.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ')

/** Every console page and file carries these (X-Frame-Options for browsers without CSP 3). */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
}

interface StaticFile {
  body: Uint8Array
  type: string
  etag: string
}

interface BuiltPage {
  html: StaticFile
  assets: Map<string, StaticFile>
}

async function file(body: Blob | Uint8Array | string, type: string): Promise<StaticFile> {
  const bytes = new Uint8Array(await new Response(body).arrayBuffer())
  return { body: bytes, type, etag: `"${Bun.hash(bytes).toString(36)}"` }
}

/** The page's HTML and its files, as built: embedded in the executable, or built from source now. */
async function build(bundle: HTMLBundle): Promise<BuiltPage> {
  const out: Array<{ name: string; html: boolean; file: StaticFile }> = []
  if (bundle.files) {
    for (const f of bundle.files) {
      const name = basename(f.path)
      out.push({
        name,
        html: f.loader === 'html',
        file: await file(Bun.file(f.path), f.headers['content-type']),
      })
    }
  } else {
    const built = await Bun.build({ entrypoints: [bundle.index], minify: true, target: 'browser' })
    if (!built.success) throw new AggregateError(built.logs, `building ${bundle.index} failed`)
    for (const o of built.outputs) {
      out.push({ name: basename(o.path), html: o.type.startsWith('text/html'), file: await file(o, o.type) })
    }
  }
  const page = out.find((o) => o.html)
  if (!page) throw new Error(`${bundle.index} built no HTML`)
  const assets = new Map(out.filter((o) => !o.html).map((o) => [o.name, o.file]))
  return { html: await file(await rebase(page.file.body, assets), page.file.type), assets }
}

/** The page with its script and style references pointed at `ASSETS_PATH`, wherever the build put them. */
async function rebase(html: Uint8Array, assets: Map<string, StaticFile>): Promise<string> {
  const point = (attr: string) => ({
    element(el: HTMLRewriterTypes.Element) {
      const ref = el.getAttribute(attr)
      const name = ref === null ? '' : basename(ref)
      if (assets.has(name)) el.setAttribute(attr, `${ASSETS_PATH}/${name}`)
    },
  })
  return new HTMLRewriter()
    .on('script[src]', point('src'))
    .on('link[href]', point('href'))
    .transform(new Response(html))
    .text()
}

function respond(request: Request, f: StaticFile, cacheControl: string): Response {
  const headers = { ...PAGE_HEADERS, 'content-type': f.type, etag: f.etag, 'cache-control': cacheControl }
  if (request.headers.get('if-none-match') === f.etag) return new Response(null, { status: 304, headers })
  return new Response(f.body, { headers })
}

/** One app's console pages: each built on its first request, then kept. */
export function consoleStatic() {
  const built = new Map<HTMLBundle, Promise<BuiltPage>>()
  const pageOf = (bundle: HTMLBundle) => {
    let p = built.get(bundle)
    if (!p) {
      p = build(bundle)
      built.set(bundle, p)
      // A failed build is tried again on the next request, not remembered.
      p.catch(() => built.delete(bundle))
    }
    return p
  }
  return {
    /** The page's HTML: revalidated on every visit (`no-cache`), so a new release shows at once. */
    async page(bundle: HTMLBundle, request: Request): Promise<Response> {
      return respond(request, (await pageOf(bundle)).html, 'no-cache')
    },
    /** A file of one of `bundles`, or null when none has it. */
    async asset(bundles: readonly HTMLBundle[], name: string, request: Request): Promise<Response | null> {
      for (const b of bundles) {
        const f = (await pageOf(b)).assets.get(name)
        if (f) return respond(request, f, 'public, max-age=31536000, immutable')
      }
      return null
    },
  }
}
