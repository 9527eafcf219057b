/**
 * @module
 * Framework-free request logic for `POST /v1/chat/completions`: validation, routing, plan patterns,
 * feature check and parameter defaults. `prepareChat` runs them all; the pieces are exported for
 * callers that need to interleave their own steps.
 */
export {
  type ChatMessageInput,
  type ChatRequestInput,
  ChatRequestSchema,
  type MessageRole,
} from './chat-request-schema.ts'
export { applyDefaults, upstreamModelName } from './defaults.ts'
export { checkModelSupport, detectFeatures, type FeatureUse } from './features.ts'
export { DEFAULT_JSON_LIMITS, type JsonLimits, MAX_JSON_DEPTH, MAX_JSON_ELEMENTS } from './json-limits.ts'
export { parseJsonBody } from './parse-json-body.ts'
export { type PlanCheck, type PreparedChat, prepareChat } from './prepare-chat.ts'
export {
  assertPlanAllows,
  Catalogue,
  type CatalogueEntry,
  type ModelId,
  notInPlan,
  parseModelId,
  planAllows,
} from './routing.ts'
export { checkTemperature, defaultTemperature, temperatureRange } from './temperature.ts'
export { parseChatBody, validateChatRequest } from './validate-chat.ts'
