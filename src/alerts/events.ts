/**
 * @module
 * An alert's document: `{ id, type, created_at, data }`, the same for every webhook it goes to
 * (the id is how a receiver drops a second delivery of one event). Slack and Discord incoming
 * webhooks take their own shape (`{ text }`, `{ content }`): a webhook's `format` turns the
 * document into one line of text for them, built at send time from the stored document.
 */
import { randomUUID } from 'node:crypto'
import type { WebhookFormat } from '../config/index.ts'

export interface AlertDocument {
  id: string
  type: string
  /** ISO-8601. */
  created_at: string
  data: Record<string, unknown>
}

export const newEventId = () => `evt_${randomUUID().replaceAll('-', '')}`

export function alertDocument(type: string, data: Record<string, unknown>, now: number): AlertDocument {
  return { id: newEventId(), type, created_at: new Date(now).toISOString(), data }
}

/** One line a person reads: the event, then its data as `name=value` pairs. */
export function alertText(doc: AlertDocument): string {
  const pairs = Object.entries(doc.data)
    .filter(([, v]) => v !== null && v !== undefined)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
  return `Switchyard ${doc.type}: ${pairs.join(' ')} (${doc.id})`
}

/** The body a webhook of `format` is sent for the stored (json) document. */
export function bodyFor(format: WebhookFormat, stored: string): string {
  if (format === 'json') return stored
  const text = alertText(JSON.parse(stored) as AlertDocument)
  return JSON.stringify(format === 'slack' ? { text } : { content: text })
}
