/**
 * @module
 * Portkey-style declarative parameter maps: each OpenAI field says where it goes in the provider's
 * body and how it is transformed, or that the provider cannot honour it.
 */
import type { ChatRequest } from '../../operations/chat.ts'
import { GatewayError } from '../../util/errors.ts'

export interface ParamRule {
  /** OpenAI request field. Absent (`undefined` or `null`) fields are skipped. */
  param: string
  /** Dotted path in the provider body, e.g. `metadata.user_id`. Absent on refuse-only rules. */
  to?: string
  /** Provider value from the OpenAI value; returning `undefined` sends nothing. */
  transform?: (value: any, req: ChatRequest) => unknown
  /** Values the provider cannot honour (alone, or beside the rest of `req`) → 400 `unsupported_feature` naming `param`. */
  unsupported?: { when: (value: any, req: ChatRequest) => boolean; message: string }
}

/**
 * Writes every mapped parameter of `req` into `body`.
 *
 * @example
 * applyParamMap([{ param: 'top_p', to: 'generationConfig.topP' }], { top_p: 0.5 } as ChatRequest, body)
 * // body.generationConfig.topP === 0.5
 */
export function applyParamMap(
  rules: readonly ParamRule[],
  req: ChatRequest,
  body: Record<string, unknown>,
): void {
  for (const rule of rules) {
    const value = req[rule.param]
    if (value === undefined || value === null) continue
    if (rule.unsupported?.when(value, req)) {
      throw new GatewayError(400, 'unsupported_feature', rule.unsupported.message, { param: rule.param })
    }
    if (!rule.to) continue
    const mapped = rule.transform ? rule.transform(value, req) : value
    if (mapped !== undefined) setPath(body, rule.to, mapped)
  }
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.')
  let node = target
  for (const key of keys.slice(0, -1)) {
    node[key] ??= {}
    node = node[key] as Record<string, unknown>
  }
  node[keys[keys.length - 1]!] = value
}

/**
 * OpenAI `stop` (a string or up to four strings) → a provider's list of stop sequences; an empty
 * list sends nothing.
 *
 * @example
 * { param: 'stop', to: 'stop_sequences', transform: toStopSequences }
 */
export function toStopSequences(stop: string | string[]): string[] | undefined {
  return typeof stop === 'string' ? [stop] : stop.length ? stop : undefined
}
