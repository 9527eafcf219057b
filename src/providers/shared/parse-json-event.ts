/**
 * @module
 * The data of one upstream SSE event as a JSON object, or the 502 that says it is not one.
 */
import { invalidResponse } from '../http.ts'
import type { SSEEvent } from '../sse/index.ts'

/**
 * @param label the provider's prefix, for the error message.
 * @example
 * parseJsonEvent({ event: 'ping', data: '{"type":"ping"}' }, 'anthropic') // { type: 'ping' }
 */
export function parseJsonEvent(sse: SSEEvent, label: string): Record<string, unknown> {
  try {
    const data = JSON.parse(sse.data) as unknown
    if (data && typeof data === 'object' && !Array.isArray(data)) return data as Record<string, unknown>
  } catch {
    // fall through
  }
  throw invalidResponse(label, `stream event '${sse.event ?? 'message'}' is not a JSON object`)
}
