/**
 * @module
 * TypeBox schema of a Gemini `GenerateContentRequest` (`:generateContent`,
 * `:streamGenerateContent`, and the body of `:countTokens`), in the API's camelCase (Google's
 * JSON also accepts snake_case; its SDKs and Gemini CLI send camelCase, which is what is read).
 * The model is not in the body: it is the path's `{model}`. Parts are read by the member they
 * carry (`text`, `inlineData`, `fileData`, `functionCall`, `functionResponse`); parts and tools of
 * kinds the gateway does not model pass unread to gemini providers and are refused by name when
 * translating. Unknown members are accepted (they reach gemini providers unchanged).
 */
import { type Static, Type as T } from '@sinclair/typebox'

const Open = { additionalProperties: true } as const

export const Part = T.Object(
  {
    text: T.Optional(T.String()),
    thought: T.Optional(T.Boolean()),
    thoughtSignature: T.Optional(T.String()),
    inlineData: T.Optional(T.Object({ mimeType: T.String(), data: T.String() }, Open)),
    fileData: T.Optional(T.Object({ mimeType: T.Optional(T.String()), fileUri: T.String() }, Open)),
    functionCall: T.Optional(
      T.Object(
        {
          id: T.Optional(T.String()),
          name: T.String({ minLength: 1 }),
          args: T.Optional(T.Record(T.String(), T.Unknown())),
        },
        Open,
      ),
    ),
    functionResponse: T.Optional(
      T.Object(
        { id: T.Optional(T.String()), name: T.String({ minLength: 1 }), response: T.Optional(T.Unknown()) },
        Open,
      ),
    ),
  },
  Open,
)
export type GeminiPartIn = Static<typeof Part>

export const Content = T.Object({ role: T.Optional(T.String()), parts: T.Array(Part) }, Open)
export type GeminiContentIn = Static<typeof Content>

const FunctionDeclaration = T.Object(
  {
    name: T.String({ minLength: 1 }),
    description: T.Optional(T.String()),
    parameters: T.Optional(T.Record(T.String(), T.Unknown())),
    parametersJsonSchema: T.Optional(T.Record(T.String(), T.Unknown())),
  },
  Open,
)

const Tool = T.Object({ functionDeclarations: T.Optional(T.Array(FunctionDeclaration)) }, Open)

const ThinkingConfig = T.Object(
  {
    thinkingBudget: T.Optional(T.Integer({ minimum: -1 })),
    includeThoughts: T.Optional(T.Boolean()),
    thinkingLevel: T.Optional(T.String()),
  },
  Open,
)

const GenerationConfig = T.Object(
  {
    temperature: T.Optional(T.Number()),
    topP: T.Optional(T.Number()),
    topK: T.Optional(T.Number()),
    maxOutputTokens: T.Optional(T.Integer({ minimum: 1 })),
    stopSequences: T.Optional(T.Array(T.String())),
    candidateCount: T.Optional(T.Integer({ minimum: 1 })),
    seed: T.Optional(T.Integer()),
    presencePenalty: T.Optional(T.Number()),
    frequencyPenalty: T.Optional(T.Number()),
    responseMimeType: T.Optional(T.String()),
    responseSchema: T.Optional(T.Record(T.String(), T.Unknown())),
    responseJsonSchema: T.Optional(T.Record(T.String(), T.Unknown())),
    responseLogprobs: T.Optional(T.Boolean()),
    thinkingConfig: T.Optional(ThinkingConfig),
  },
  Open,
)

export const GenerateContentRequestSchema = T.Object(
  {
    contents: T.Array(Content, { minItems: 1 }),
    systemInstruction: T.Optional(Content),
    tools: T.Optional(T.Array(Tool)),
    toolConfig: T.Optional(
      T.Object(
        {
          functionCallingConfig: T.Optional(
            T.Object(
              { mode: T.Optional(T.String()), allowedFunctionNames: T.Optional(T.Array(T.String())) },
              Open,
            ),
          ),
        },
        Open,
      ),
    ),
    generationConfig: T.Optional(GenerationConfig),
    cachedContent: T.Optional(T.String()),
  },
  Open,
)
export type GenerateContentRequest = Static<typeof GenerateContentRequestSchema>
