/**
 * @module
 * Chat parameters only OpenAI-compatible upstreams honour. The pass-through sends them as they
 * came; a translating adapter (anthropic, gemini, demo) has no counterpart and would drop them, so
 * the model would answer in plain text where a function call, audio or a searched answer was asked
 * for, or unmoderated where moderation was. A translated route refuses the first one it meets, naming it (400 `unsupported_parameter`).
 *
 * @example
 * refuseOpenAIOnly({ model: 'anthropic/claude', messages, web_search_options: {} })
 * // throws 400 unsupported_parameter, param web_search_options
 */
import { GatewayError } from '../../util/errors.ts'
import { legacyFunctions } from './chat-features.ts'
import type { ChatRequestInput } from './chat-request-schema.ts'

interface OpenAIOnly {
  /** The field the request uses it by, or null. */
  usedBy(req: Record<string, unknown>): string | null
  what: string
  instead: string
}

const given = (value: unknown) => value !== undefined && value !== null

const OPENAI_ONLY: readonly OpenAIOnly[] = [
  {
    usedBy: (req) => legacyFunctions(req as ChatRequestInput),
    what: "OpenAI's deprecated function calling",
    instead:
      'Send the functions as tools ([{"type": "function", "function": {...}}]) and tool_choice instead',
  },
  {
    usedBy: (req) =>
      Array.isArray(req.modalities) && req.modalities.includes('audio')
        ? 'modalities'
        : given(req.audio)
          ? 'audio'
          : null,
    what: 'audio output',
    instead: 'Ask for text only (leave out "audio" and the "audio" modality)',
  },
  {
    usedBy: (req) => (given(req.moderation) ? 'moderation' : null),
    what: "OpenAI's moderation of the input and output",
    instead: 'Leave moderation out (and moderate on your side)',
  },
  {
    usedBy: (req) => (given(req.web_search_options) ? 'web_search_options' : null),
    what: "OpenAI's web search",
    instead: 'Leave web_search_options out',
  },
]

/** Throws for the first OpenAI-only parameter the request uses: the route translates. */
export function refuseOpenAIOnly(req: ChatRequestInput): void {
  for (const rule of OPENAI_ONLY) {
    const param = rule.usedBy(req as Record<string, unknown>)
    if (!param) continue
    throw new GatewayError(
      400,
      'unsupported_parameter',
      `${param} asks for ${rule.what}, which only OpenAI-compatible upstreams serve, and this model's provider is not one. ${rule.instead}, or choose an openai model.`,
      { param },
    )
  }
}
