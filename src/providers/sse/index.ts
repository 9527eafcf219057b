/**
 * @module
 * Server-sent events: parsing what upstreams stream (`parseSSE`) and framing what the gateway
 * streams (`encodeSSE`).
 */
export { encodeSSE } from './encode.ts'
export { isJson, parseSSE, type SSEEvent, type SSELimits, sseParser } from './parse.ts'
