/**
 * @module
 * The Responses request's `instructions` and `input` items → the chat form's messages, each with
 * its origin: the item and the field that carried its role or tool calls, so an error from the
 * shared checks names `input[3].content[1]`, not `messages[4].content[1]` (decode.ts
 * `responsesParam`). What the chat form cannot carry is recorded in `problems` (`decode.ts` says
 * what becomes of it).
 *
 * @example
 * decodeInput({ model: 'a/b', input: 'Hello' }, messages, origins, problems)
 * messages // [{ role: 'user', content: 'Hello' }]
 */

import type { ChatMessage, ContentPart, ToolCall } from '../../operations/chat.ts'
import { GatewayError } from '../../util/errors.ts'
import { clip } from '../../util/text.ts'
import type {
  ContentPartInput,
  FunctionCallItemInput,
  FunctionCallOutputItemInput,
  InputItem,
  MessageItem,
  ResponsesRequestInput,
} from './request-schema.ts'
import { readSummary, SUMMARY_HEADER, SUMMARY_PROMPT } from './summary-text.ts'

/** Where a chat message came from: its item, and the field that carried its role or tool calls. */
export interface Origin {
  path: string
  role: string
  toolCalls: string
}

/**
 * Appends the chat messages of the request's instructions and input, in order, to `messages`, and
 * their origins to `origins` (the caller's arrays: nothing else is allocated for the result).
 */
export function decodeInput(
  req: ResponsesRequestInput,
  messages: ChatMessage[],
  origins: Origin[],
  problems: GatewayError[],
): void {
  const push = (message: ChatMessage, origin: Origin) => {
    messages.push(message)
    origins.push(origin)
  }
  if (req.instructions) {
    push({ role: 'system', content: req.instructions }, instructionsOrigin)
  }
  if (typeof req.input === 'string') {
    push({ role: 'user', content: req.input }, { path: 'input', role: 'input', toolCalls: 'input' })
  } else {
    const images: ToolImages = { parts: [], origin: null }
    req.input.forEach((item, i) => {
      addItem(item as unknown as InputItem, `input[${i}]`, messages, origins, problems, images)
      // A run of tool outputs ends: the images they held follow them as one user message (a chat
      // tool message carries text only, and nothing may come between an assistant's tool calls and
      // their results).
      const next = req.input[i + 1] as { type?: string } | undefined
      if (images.parts.length && next?.type !== 'function_call_output') {
        push({ role: 'user', content: images.parts }, images.origin!)
        images.parts = []
        images.origin = null
      }
    })
  }
}

const instructionsOrigin: Origin = { path: 'instructions', role: 'instructions', toolCalls: 'instructions' }

/** The images of a run of tool outputs (`function_call_output` parts), with the first one's origin. */
interface ToolImages {
  parts: ContentPart[]
  origin: Origin | null
}

function addItem(
  item: InputItem,
  path: string,
  messages: ChatMessage[],
  origins: Origin[],
  problems: GatewayError[],
  images: ToolImages,
): void {
  switch (item.type) {
    case 'message': {
      const msg = item as unknown as MessageItem
      const origin = { path, role: `${path}.role`, toolCalls: path }
      if (msg.role === 'assistant') {
        messages.push(assistantMessage(msg.content, path, problems))
      } else {
        const content =
          typeof msg.content === 'string'
            ? msg.content
            : msg.content.map((p, j) => chatPart(p, `${path}.content[${j}]`, problems))
        const textOnly = msg.role !== 'user' && Array.isArray(content)
        messages.push({
          role: msg.role,
          content: textOnly ? joinText(content, `${path}.content`, problems) : content,
        })
      }
      origins.push(origin)
      return
    }
    case 'function_call': {
      const fc = item as unknown as FunctionCallItemInput
      const call: ToolCall = {
        id: fc.call_id,
        type: 'function',
        function: { name: fc.name, arguments: fc.arguments },
      }
      const last = messages.at(-1)
      if (last?.role === 'assistant') {
        if (last.tool_calls) last.tool_calls.push(call)
        else {
          last.tool_calls = [call]
          origins[origins.length - 1]!.toolCalls = path
        }
        return
      }
      messages.push({ role: 'assistant', content: null, tool_calls: [call] })
      origins.push({ path, role: path, toolCalls: path })
      return
    }
    case 'function_call_output': {
      const out = item as unknown as FunctionCallOutputItemInput
      let content: string
      if (typeof out.output === 'string') content = out.output
      else {
        // Text stays the tool message's; an image (Codex's view_image) goes to the user message
        // that follows the run of tool outputs (`decodeInput`), as chat carries images.
        content = ''
        let shown = 0
        out.output.forEach((p, j) => {
          const part = chatPart(p, `${path}.output[${j}]`, problems)
          if (part.type === 'text') content += part.text
          else if (part.type === 'image_url') {
            images.parts.push(part)
            images.origin ??= { path: `${path}.output`, role: `${path}.output`, toolCalls: path }
            shown++
          } else problems.push(notText(`${path}.output[${j}]`))
        })
        if (!content && shown) content = 'The result is the image in the next message.'
      }
      messages.push({ role: 'tool', tool_call_id: out.call_id, content })
      origins.push({ path, role: path, toolCalls: path })
      return
    }
    case 'reasoning':
      return
    // Codex's compaction through /v1/responses (compaction.ts): the request for the summary, and
    // a summary this gateway wrote, read back as the conversation so far.
    case 'compaction_trigger':
      messages.push({ role: 'user', content: SUMMARY_PROMPT })
      origins.push({ path, role: path, toolCalls: path })
      return
    case 'compaction': {
      const summary = readSummary((item as { encrypted_content?: unknown }).encrypted_content)
      if (summary === null) {
        problems.push(
          new GatewayError(
            400,
            'unsupported_value',
            `${path} is a compaction only the upstream that made it can read (its encrypted_content is not this gateway's summary). Send it to that model, or compact the conversation again on this one.`,
            { param: `${path}.encrypted_content` },
          ),
        )
        return
      }
      messages.push({ role: 'user', content: `${SUMMARY_HEADER}${summary}` })
      origins.push({ path, role: path, toolCalls: path })
      return
    }
  }
  problems.push(
    new GatewayError(
      400,
      'unsupported_value',
      `${path}.type "${clip(item.type)}" is an item only OpenAI's Responses API understands, and this model's upstream does not speak it. Send message, function_call and function_call_output items.`,
      { param: `${path}.type` },
    ),
  )
}

function assistantMessage(
  content: string | ContentPartInput[],
  path: string,
  problems: GatewayError[],
): ChatMessage {
  if (typeof content === 'string') return { role: 'assistant', content }
  const texts: string[] = []
  let refusal: string | undefined
  content.forEach((part, j) => {
    if (part.type === 'output_text' || part.type === 'input_text') texts.push(part.text)
    else if (part.type === 'refusal') refusal = part.refusal
    else problems.push(notText(`${path}.content[${j}]`))
  })
  const message: ChatMessage = { role: 'assistant', content: texts.length ? texts.join('') : null }
  if (refusal !== undefined) message.refusal = refusal
  return message
}

function chatPart(part: ContentPartInput, param: string, problems: GatewayError[]): ContentPart {
  switch (part.type) {
    case 'input_text':
    case 'output_text':
      return { type: 'text', text: part.text }
    case 'refusal':
      return { type: 'text', text: part.refusal }
    case 'input_image': {
      if (!part.image_url) return unsendable(problems, fileStore(param, 'image_url (a URL or a data: URL)'))
      return {
        type: 'image_url',
        // `original` (the Responses API's full resolution) is chat's `high`, the most chat offers.
        image_url: {
          url: part.image_url,
          ...(part.detail ? { detail: part.detail === 'original' ? 'high' : part.detail } : {}),
        },
      }
    }
    case 'input_file': {
      if (part.file_url || (!part.file_data && part.file_id))
        return unsendable(problems, fileStore(param, 'file_data (base64)'))
      const file: Record<string, unknown> = {}
      if (part.file_data) file.file_data = part.file_data
      if (part.filename) file.filename = part.filename
      return { type: 'file', file }
    }
  }
}

/** Records a part the chat form cannot carry; an empty text part stands in for it. */
function unsendable(problems: GatewayError[], problem: GatewayError): ContentPart {
  problems.push(problem)
  return { type: 'text', text: '' }
}

function joinText(parts: ContentPart[], param: string, problems: GatewayError[]): string {
  let text = ''
  parts.forEach((part, j) => {
    if (part.type === 'text') text += part.text
    else problems.push(notText(`${param}[${j}]`))
  })
  return text
}

function notText(param: string): GatewayError {
  return new GatewayError(
    400,
    'invalid_value',
    `${param} must be a text part here (input_text or output_text).`,
    {
      param,
    },
  )
}

function fileStore(param: string, instead: string): GatewayError {
  return new GatewayError(
    400,
    'unsupported_value',
    `${param} refers to a file by id or URL, which needs OpenAI's file store; this model's upstream has none. Send ${instead} instead.`,
    { param },
  )
}
