/**
 * The URL the start line and `serve --json` print: an IPv6 host written as in a URL (`[::1]`,
 * which listens fine) was bracketed again, `http://[[::1]]:PORT`, a URL nothing can open.
 */
import { expect, test } from 'bun:test'
import { startGateway, testConfigDoc } from '../support/gateway.ts'

test.each(['::1', '[::1]'])('host %s: the URL is http://[::1]:PORT and answers', async (host) => {
  const gw = await startGateway({ doc: testConfigDoc({ server: { host, port: 0 } }) })
  try {
    expect(gw.url).toMatch(/^http:\/\/\[::1\]:\d+$/)
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200)
  } finally {
    await gw.stop()
  }
})
