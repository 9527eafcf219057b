/**
 * @module
 * The webhook signature (DESIGN §15): `x-switchyard-signature: t=<unix s>,v1=<hex HMAC-SHA256 of
 * "<t>.<body>">`, keyed with the webhook's secret. The timestamp is signed with the body so a
 * receiver can refuse a replayed delivery (older than, say, five minutes); the README shows the
 * receiver's side in a few lines.
 *
 * @example
 * signatureHeader('whsec-0123456789abcdef', 1767225600, '{"id":"evt_1"}')
 * // → 't=1767225600,v1=5c3f…'
 */
import { createHmac } from 'node:crypto'

export const SIGNATURE_HEADER = 'x-switchyard-signature'

export function signatureHeader(secret: string, unixSeconds: number, body: string): string {
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex')
  return `t=${unixSeconds},v1=${mac}`
}
