/**
 * @module
 * `switchyard alerts test`: sends one `alert.test` event to every configured webhook now, signed
 * and shaped as the queue's deliveries are, and prints each answer. It goes straight out (not
 * through the store's queue, so no server need run): the point is to see the receiver answer.
 * Exits 1 when any webhook did not answer 2xx.
 */
import { alertDocument, postAlert } from '../alerts/index.ts'
import { GatewayError } from '../util/errors.ts'
import type { Parsed } from './args.ts'
import { type CommandSpec, loadConfig, Output, subcommand } from './context.ts'
import type { Io } from './io.ts'

const COMMANDS = { test: { usage: 'alerts test', words: 2 } } satisfies Record<string, CommandSpec>

export async function alertsCommand(p: Parsed, io: Io): Promise<number> {
  subcommand(p, 'alerts', COMMANDS)
  const config = await loadConfig(p, io, { secrets: false })
  const hooks = config.alerts.webhooks
  if (!hooks.length)
    throw new GatewayError(
      400,
      'no_webhooks',
      'no webhook is configured: add alerts.webhooks to the config first',
    )
  const now = Date.now()
  const doc = alertDocument('alert.test', { message: 'A test event from switchyard alerts test.' }, now)
  const body = JSON.stringify(doc)
  const results = await Promise.all(
    hooks.map(async (hook) => {
      const r = await postAlert(
        hook,
        { event: doc.type, eventId: doc.id, body },
        Math.floor(now / 1000),
        AbortSignal.timeout(30_000),
      )
      return {
        url: hook.url,
        format: hook.format,
        delivered: r.error === null,
        status: r.status,
        error: r.error,
      }
    }),
  )
  new Output(p, io).result({ event_id: doc.id, results }, () =>
    results
      .map(
        (r) =>
          `${r.delivered ? 'delivered' : 'FAILED'}  ${r.url}  ${r.status ?? '-'}${r.error ? `  ${r.error}` : ''}`,
      )
      .join('\n'),
  )
  return results.every((r) => r.delivered) ? 0 : 1
}
