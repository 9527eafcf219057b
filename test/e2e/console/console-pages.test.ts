/**
 * The console's pages as served (issue 31, finding 5): each names its icon inline, so a browser
 * does not ask for `/favicon.ico` — which answered 404, a line of noise in the access log on every
 * visit.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startGateway, type TestGateway } from '../../support/gateway.ts'

let gw: TestGateway
beforeAll(async () => {
  gw = await startGateway()
})
afterAll(() => gw.stop())

test('/console and /console/me carry an inline icon: no /favicon.ico request', async () => {
  for (const path of ['/console', '/console/me']) {
    const html = await (await fetch(`${gw.url}${path}`)).text()
    const icons = [...html.matchAll(/<link[^>]*rel="icon"[^>]*>/g)].map((m) => m[0])
    expect({ path, icons: icons.length }).toEqual({ path, icons: 1 })
    const href = /href="([^"]*)"/.exec(icons[0]!)![1]!
    expect(href).toStartWith('data:image/png;base64,')
    const png = Buffer.from(href.slice('data:image/png;base64,'.length), 'base64')
    expect(png.subarray(1, 4).toString()).toBe('PNG')
  }
})
