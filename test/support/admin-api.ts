/**
 * The admin API over HTTP, for tests whose gateway is a spawned `serve` (process.ts): an account
 * or a key through it costs a request, where a CLI process apiece costs seconds on a loaded machine.
 */
import { expect } from 'bun:test'
import { ADMIN_TOKEN } from './config-doc.ts'

/** POSTs `body` to `/admin/v1<path>` of the gateway at `url`; expects a 200 and returns its JSON. */
export async function adminPost<T = { id: string; key: string }>(
  url: string,
  path: string,
  body: unknown,
): Promise<T> {
  const r = await fetch(`${url}/admin/v1${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  expect(r.status).toBe(200)
  return (await r.json()) as T
}
