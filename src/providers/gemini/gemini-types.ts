/**
 * @module
 * The slice of the Gemini API (`generateContent`, `streamGenerateContent`) wire format that
 * Switchyard writes and reads. Response types are loose: Google adds part kinds and fields over
 * time, and an unknown one must not break us.
 */

export interface GeminiPart {
  text?: string
  /** A thought summary (asked for with `includeThoughts`): reasoning, never content. */
  thought?: boolean
  /** Opaque reasoning state; Gemini 3 requires it back on the first `functionCall` of a step. */
  thoughtSignature?: string
  inlineData?: { mimeType: string; data: string }
  fileData?: { mimeType: string; fileUri: string }
  functionCall?: { id?: string; name: string; args?: Record<string, unknown> }
  functionResponse?: { name: string; response: Record<string, unknown> }
  [field: string]: unknown
}

export interface GeminiContent {
  role: 'user' | 'model'
  parts: GeminiPart[]
}

export interface GeminiFunctionDeclaration {
  name: string
  description?: string
  /** JSON Schema as OpenAI clients write it (`additionalProperties`, `type: [..., 'null']`, `$defs`). */
  parametersJsonSchema?: Record<string, unknown>
}

export interface GeminiToolConfig {
  /** `VALIDATED`: the model may answer in text, and its calls are held to the schema. */
  functionCallingConfig: { mode: 'AUTO' | 'ANY' | 'NONE' | 'VALIDATED'; allowedFunctionNames?: string[] }
}

/** Gemini 2.5's thinking knobs (Gemini 3 also takes `thinkingLevel`, never beside a budget). */
export interface GeminiThinkingConfig {
  /** Tokens to think with; 0 turns thinking off on the models that allow it. */
  thinkingBudget: number
  /** Answer with thought summaries (`thought: true` parts). */
  includeThoughts?: boolean
}

export interface GeminiGenerationConfig {
  temperature?: number
  topP?: number
  topK?: number
  maxOutputTokens?: number
  stopSequences?: string[]
  candidateCount?: number
  seed?: number
  presencePenalty?: number
  frequencyPenalty?: number
  responseMimeType?: string
  responseJsonSchema?: Record<string, unknown>
  thinkingConfig?: GeminiThinkingConfig
}

export interface GeminiRequest {
  contents: GeminiContent[]
  systemInstruction?: { parts: Array<{ text: string }> }
  tools?: Array<{ functionDeclarations: GeminiFunctionDeclaration[] }>
  toolConfig?: GeminiToolConfig
  generationConfig?: GeminiGenerationConfig
}

export interface GeminiUsageMetadata {
  promptTokenCount?: number
  candidatesTokenCount?: number
  thoughtsTokenCount?: number
  cachedContentTokenCount?: number
  /** Google's built-in tools' results fed back to the model: billed as input, apart from `promptTokenCount`. */
  toolUsePromptTokenCount?: number
  totalTokenCount?: number
}

export interface GeminiCandidate {
  content?: { role?: string; parts?: GeminiPart[] }
  finishReason?: string
  index?: number
}

/** A `generateContent` response, and each event of `streamGenerateContent?alt=sse`. */
export interface GeminiResponse {
  candidates?: GeminiCandidate[]
  promptFeedback?: { blockReason?: string }
  usageMetadata?: GeminiUsageMetadata
  modelVersion?: string
  responseId?: string
}

/** Google's RPC error body: `{error: {code, message, status, details}}`. */
export interface GeminiErrorBody {
  error?: {
    code?: number
    message?: string
    status?: string
    details?: Array<{ '@type'?: string; reason?: string; [field: string]: unknown }>
  }
}
