/**
 * @module
 * A Gemini `GenerateContentRequest` → the canonical chat request, for every provider that does not
 * speak Gemini's wire. Fields are named in Gemini's terms when refused.
 *
 * - `systemInstruction` → a system message (text parts only).
 * - `contents[i]`: role `user` (or none) → a user message whose `text` parts are text, `inlineData`
 *   images / wav or mp3 audio / PDF → `image_url` / `input_audio` / `file` data URLs (other types:
 *   refused, as OpenAI's chat file part takes PDF only), a `fileData` with an image type by a
 *   public http(s) URL → `image_url` by URI (without a type, or on a video host: refused); each
 *   `functionResponse` part → a `tool` message answering the call it names (by `id` when the call
 *   had one, else the earliest unanswered call of that name). Role `model` → an assistant message:
 *   text parts (thought summaries dropped: no provider takes another's back), each `functionCall`
 *   → a tool call (its `id`, else a fresh one).
 * - `tools[].functionDeclarations` → function tools (`parametersJsonSchema` as is; the older
 *   `parameters`, an OpenAPI subset, with its upper-case type names lowered). Other tool kinds
 *   (`googleSearch`, `codeExecution`, …) run only at Google: refused by name, or left out where
 *   the model entry says `unsupported_tools: drop`.
 * - `toolConfig.functionCallingConfig.mode` AUTO / VALIDATED → `auto`, ANY → `required` (one
 *   allowed name: that function), NONE → `none`.
 * - `generationConfig`: temperature, topP, topK, maxOutputTokens, stopSequences, candidateCount
 *   (`n`), seed, presence / frequency penalties, `responseMimeType: application/json` (with
 *   `responseJsonSchema` or `responseSchema`: a JSON schema answer) and `thinkingConfig`
 *   (thinking.ts).
 */
import type {
  ChatMessage,
  ChatRequest,
  ContentPart,
  FunctionTool,
  ToolChoice,
} from '../../operations/chat.ts'
import { GatewayError } from '../../util/errors.ts'
import { clip } from '../../util/text.ts'
import { refuseForcedCallOfDropped } from '../shared/tool-drops.ts'
import { imageByUri } from './charged-input.ts'
import type { GeminiPartIn, GenerateContentRequest } from './request-schema.ts'
import { reasoningEffortOf } from './thinking.ts'

/** Tool kinds Google runs itself; no other provider can. */
const KNOWN_TOOL = 'functionDeclarations'

/**
 * The chat request; Google's built-in tools are refused by name (`reject`, the model entry's
 * `unsupported_tools` default) or left out (`drop`: `builtInTools` names them).
 */
export function convertToChatRequest(
  req: GenerateContentRequest,
  model: string,
  policy: 'reject' | 'drop' = 'reject',
): ChatRequest {
  const messages: ChatMessage[] = []
  if (req.systemInstruction) {
    const text = req.systemInstruction.parts.map((part, j) => {
      if (typeof part.text !== 'string')
        throw unsupported(`systemInstruction.parts[${j}]`, 'a system instruction may only hold text parts')
      return part.text
    })
    messages.push({ role: 'system', content: text.join('\n') })
  }
  // Calls not yet answered, oldest first: Gemini answers by name (or by the call's id), OpenAI by id.
  const open: Array<{ id: string; name: string; callId?: string }> = []
  req.contents.forEach((content, i) => {
    const param = `contents[${i}]`
    const role = content.role ?? 'user'
    if (role === 'model') {
      messages.push(modelMessage(content.parts, param, open))
      return
    }
    if (role !== 'user' && role !== 'function')
      throw new GatewayError(
        400,
        'invalid_value',
        `${param}.role "${clip(role)}" is not a Gemini role. Send "user" or "model".`,
        { param: `${param}.role` },
      )
    const parts: ContentPart[] = []
    content.parts.forEach((part, j) => {
      const at = `${param}.parts[${j}]`
      if (part.functionResponse) {
        const fr = part.functionResponse
        const byId = fr.id === undefined ? -1 : open.findIndex((c) => c.callId === fr.id)
        const k = byId >= 0 ? byId : open.findIndex((c) => c.name === fr.name)
        if (k < 0)
          throw new GatewayError(
            400,
            'invalid_value',
            `${at}.functionResponse answers "${clip(fr.name)}", but no earlier functionCall of that name is unanswered.`,
            { param: `${at}.functionResponse.name` },
          )
        const [call] = open.splice(k, 1)
        messages.push({ role: 'tool', tool_call_id: call!.id, content: JSON.stringify(fr.response ?? {}) })
        return
      }
      const converted = userPart(part, at)
      if (converted) parts.push(converted)
    })
    if (parts.length) messages.push({ role: 'user', content: parts })
  })

  const out: ChatRequest = { model, messages }
  const tools = functionTools(req, policy)
  if (tools.length) out.tools = tools
  const choice = toolChoice(req)
  if (choice !== undefined && tools.length) out.tool_choice = choice
  // Every tool it could call was a built-in `drop` left out.
  else if (choice !== undefined && choice !== 'auto' && choice !== 'none' && builtInTools(req).length)
    refuseForcedCallOfDropped('toolConfig.functionCallingConfig.mode', builtInTools(req))
  const g = req.generationConfig
  if (g) {
    if (g.temperature !== undefined) out.temperature = g.temperature
    if (g.topP !== undefined) out.top_p = g.topP
    if (g.topK !== undefined) out.top_k = g.topK
    if (g.maxOutputTokens !== undefined) out.max_tokens = g.maxOutputTokens
    if (g.stopSequences?.length) out.stop = g.stopSequences
    if (g.candidateCount !== undefined && g.candidateCount !== 1) out.n = g.candidateCount
    if (g.seed !== undefined) out.seed = g.seed
    if (g.presencePenalty !== undefined) out.presence_penalty = g.presencePenalty
    if (g.frequencyPenalty !== undefined) out.frequency_penalty = g.frequencyPenalty
    const format = responseFormat(g)
    if (format) out.response_format = format
    const effort = reasoningEffortOf(g.thinkingConfig)
    if (effort) out.reasoning_effort = effort
  }
  return out
}

function modelMessage(
  parts: GeminiPartIn[],
  param: string,
  open: Array<{ id: string; name: string; callId?: string }>,
): ChatMessage {
  let text = ''
  const calls: NonNullable<ChatMessage['tool_calls']> = []
  parts.forEach((part, j) => {
    if (part.thought) return
    if (typeof part.text === 'string') text += part.text
    else if (part.functionCall) {
      const id = part.functionCall.id || `call_${crypto.randomUUID().replaceAll('-', '').slice(0, 24)}`
      open.push({ id, name: part.functionCall.name, callId: part.functionCall.id })
      calls.push({
        id,
        type: 'function',
        function: { name: part.functionCall.name, arguments: JSON.stringify(part.functionCall.args ?? {}) },
      })
    } else if (!part.thoughtSignature || Object.keys(part).some((k) => k !== 'thoughtSignature'))
      throw unsupported(`${param}.parts[${j}]`, `a model turn's part of this kind (${partKind(part)})`)
  })
  const message: ChatMessage = { role: 'assistant', content: text === '' ? null : text }
  if (calls.length) message.tool_calls = calls
  return message
}

function userPart(part: GeminiPartIn, param: string): ContentPart | null {
  if (typeof part.text === 'string')
    return part.thought || part.text === '' ? null : { type: 'text', text: part.text }
  if (part.inlineData) {
    const { mimeType, data } = part.inlineData
    const type = mimeType.toLowerCase()
    if (type.startsWith('image/'))
      return { type: 'image_url', image_url: { url: `data:${type};base64,${data}` } }
    if (type.startsWith('audio/')) {
      const format = AUDIO_FORMATS[type]
      if (!format)
        throw unsupported(
          `${param}.inlineData.mimeType`,
          `audio of type ${clip(type)} (the chat form takes wav and mp3 only: audio/wav or audio/mpeg)`,
        )
      return { type: 'input_audio', input_audio: { data, format } }
    }
    // OpenAI's chat file part takes PDF only (its other file kinds are the Responses API's).
    if (type !== 'application/pdf')
      throw unsupported(
        `${param}.inlineData.mimeType`,
        `a file of type ${clip(type)} (the chat form takes images, wav / mp3 audio and PDF files only)`,
      )
    // OpenAI's file part names the file beside its data.
    return { type: 'file', file: { filename: 'file.pdf', file_data: `data:${type};base64,${data}` } }
  }
  if (part.fileData) {
    const { fileUri } = part.fileData
    const type = part.fileData.mimeType?.toLowerCase()
    // Without a type Gemini reads the URI as what it is (a YouTube URL: a video), which a chat
    // target would be sent as an image URL and refuse.
    if (type === undefined || (type.startsWith('image/') && !imageByUri(part.fileData)))
      throw unsupported(
        `${param}.fileData.fileUri`,
        'a file by URI without an image mimeType, or on a video host, which Gemini reads as video or by its content; only images (mimeType image/*) by URI are translated',
      )
    if (!type.startsWith('image/'))
      throw unsupported(`${param}.fileData`, 'files by URI other than images reach only gemini providers')
    // Cloud Storage and the Files API are read with Google's credentials: no other provider can.
    if (!/^https?:\/\//i.test(fileUri) || GOOGLE_FILES.test(fileUri))
      throw unsupported(
        `${param}.fileData.fileUri`,
        'an image on Cloud Storage (gs://) or in the Files API, which only Google can read (send it inline, or by a public https URL)',
      )
    return { type: 'image_url', image_url: { url: fileUri } }
  }
  throw unsupported(param, `a part of this kind (${partKind(part)})`)
}

/** The audio types OpenAI's `input_audio.format` takes (`wav`, `mp3`), by MIME type. */
const AUDIO_FORMATS: Record<string, 'wav' | 'mp3'> = {
  'audio/wav': 'wav',
  'audio/x-wav': 'wav',
  'audio/wave': 'wav',
  'audio/vnd.wave': 'wav',
  'audio/mpeg': 'mp3',
  'audio/mp3': 'mp3',
  'audio/mpeg3': 'mp3',
  'audio/x-mpeg-3': 'mp3',
}

/** Gemini's Files API (`…/v1beta/files/…`): a URI only a Google API key reads. */
const GOOGLE_FILES = /^https?:\/\/generativelanguage\.googleapis\.com\//i

function partKind(part: GeminiPartIn): string {
  return (
    Object.keys(part)
      .filter((k) => k !== 'thoughtSignature' && k !== 'thought')
      .join(', ') || 'empty'
  )
}

/** Google's built-in tools in the request (`googleSearch`, …), each once: what `drop` leaves out. */
export function builtInTools(req: GenerateContentRequest): string[] {
  const keys = new Set<string>()
  for (const tool of req.tools ?? [])
    for (const key of Object.keys(tool)) if (key !== KNOWN_TOOL) keys.add(key)
  return [...keys]
}

function functionTools(req: GenerateContentRequest, policy: 'reject' | 'drop'): FunctionTool[] {
  const tools: FunctionTool[] = []
  req.tools?.forEach((tool, i) => {
    for (const key of Object.keys(tool))
      if (key !== KNOWN_TOOL && policy === 'reject')
        throw unsupported(
          `tools[${i}].${key}`,
          `the tool "${clip(key)}" runs only at Google (an operator may set unsupported_tools: drop on the model)`,
        )
    for (const fn of tool.functionDeclarations ?? []) {
      const parameters = fn.parametersJsonSchema ?? (fn.parameters ? lowerTypes(fn.parameters) : undefined)
      tools.push({
        type: 'function',
        function: {
          name: fn.name,
          ...(fn.description !== undefined ? { description: fn.description } : {}),
          ...(parameters !== undefined ? { parameters: parameters as Record<string, unknown> } : {}),
        },
      })
    }
  })
  return tools
}

/** Gemini's OpenAPI schema (`"type": "OBJECT"`) → JSON Schema's lower-case type names. */
function lowerTypes(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(lowerTypes)
  if (schema === null || typeof schema !== 'object') return schema
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(schema))
    out[k] = k === 'type' && typeof v === 'string' ? v.toLowerCase() : lowerTypes(v)
  return out
}

function toolChoice(req: GenerateContentRequest): ToolChoice | undefined {
  const config = req.toolConfig?.functionCallingConfig
  if (!config?.mode) return undefined
  switch (config.mode.toUpperCase()) {
    case 'AUTO':
    case 'VALIDATED':
    case 'MODE_UNSPECIFIED':
      return 'auto'
    case 'NONE':
      return 'none'
    case 'ANY': {
      const names = config.allowedFunctionNames ?? []
      return names.length === 1 ? { type: 'function', function: { name: names[0]! } } : 'required'
    }
  }
  throw new GatewayError(
    400,
    'invalid_value',
    `toolConfig.functionCallingConfig.mode "${clip(config.mode)}" is not one of AUTO, ANY, NONE, VALIDATED.`,
    { param: 'toolConfig.functionCallingConfig.mode' },
  )
}

function responseFormat(
  g: NonNullable<GenerateContentRequest['generationConfig']>,
): ChatRequest['response_format'] {
  const schema = g.responseJsonSchema ?? (g.responseSchema ? lowerTypes(g.responseSchema) : undefined)
  if (schema !== undefined)
    return {
      type: 'json_schema',
      json_schema: { name: 'response', schema: schema as Record<string, unknown> },
    }
  if (g.responseMimeType === 'application/json') return { type: 'json_object' }
  return undefined
}

function unsupported(param: string, what: string): GatewayError {
  return new GatewayError(
    400,
    'unsupported_feature',
    `${param}: ${what}; this model's provider is not Gemini, so it cannot be translated.`,
    { param },
  )
}
