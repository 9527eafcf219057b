/**
 * @module
 * The catalogue features (DESIGN §3, §6) a Messages request uses, named in the Messages API's
 * own terms, for the pipeline's one feature check.
 *
 * | field                                              | feature          |
 * |----------------------------------------------------|------------------|
 * | `stream: true`                                     | streaming        |
 * | `tools`, tool_use / tool_result blocks (a `tool_choice` comes only with tools) | tools |
 * | `system`, a `system` turn                          | system_messages  |
 * | image or document blocks (also inside tool results) | vision          |
 * | `thinking` enabled or adaptive                     | reasoning        |
 * | `output_config.format` (or the beta's `output_format`) | json_schema  |
 *
 * Thinking blocks replayed from earlier turns do not count: a model without reasoning simply
 * does not see them (translation drops them).
 */
import { type FeatureUse, featureUse } from '../../catalogue/features.ts'
import { outputFormat } from './convert-to-chat-request.ts'
import type { ContentBlock, CountTokensRequest } from './request-schema.ts'

const DO_WITHOUT = {
  streaming: 'send "stream": false',
  tools: 'remove tools, tool_choice and the tool_use / tool_result blocks',
  system_messages: 'move the system prompt into the first user message',
  vision: 'remove the image and document blocks',
  reasoning: 'remove "thinking" or set it to {"type": "disabled"}',
  json_schema: 'remove the output format and ask for JSON in the prompt',
} as const

const use = featureUse(DO_WITHOUT)

export function detectMessagesFeatures(req: CountTokensRequest & { stream?: boolean }): FeatureUse[] {
  const uses: FeatureUse[] = []
  const seen = (feature: string) => uses.some((u) => u.feature === feature)
  if (req.stream === true) uses.push(use('streaming', 'stream'))
  // A tool_choice other than none comes only with tools (`checkTools`), so `tools` names the use.
  if (req.tools !== undefined && req.tools.length > 0) uses.push(use('tools', 'tools'))
  if (req.system !== undefined && req.system.length > 0) uses.push(use('system_messages', 'system'))
  if (req.thinking !== undefined && req.thinking.type !== 'disabled') uses.push(use('reasoning', 'thinking'))
  const format = outputFormat(req)
  if (format) uses.push(use('json_schema', format.param))

  for (let i = 0; i < req.messages.length; i++) {
    const message = req.messages[i]!
    if (message.role === 'system' && !seen('system_messages')) {
      uses.push(use('system_messages', `messages[${i}].role`))
    }
    if (typeof message.content === 'string') continue
    for (let j = 0; j < message.content.length; j++) {
      blockUses(message.content[j]!, `messages[${i}].content[${j}]`, uses, seen)
    }
  }
  return uses
}

function blockUses(
  block: ContentBlock,
  param: string,
  uses: FeatureUse[],
  seen: (f: string) => boolean,
): void {
  switch (block.type) {
    case 'tool_use':
      if (!seen('tools')) uses.push(use('tools', param))
      return
    case 'tool_result':
      if (!seen('tools')) uses.push(use('tools', param))
      if (Array.isArray(block.content)) {
        for (let k = 0; k < block.content.length; k++) {
          blockUses(block.content[k] as ContentBlock, `${param}.content[${k}]`, uses, seen)
        }
      }
      return
    case 'image':
    case 'document':
      if (!seen('vision')) uses.push(use('vision', param))
      return
  }
}
