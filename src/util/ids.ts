/**
 * @module
 * Request ids. UUIDv7 (time first, then random): unique per request and increasing with time,
 * so the usage log's UNIQUE index on them grows at its right edge instead of at random pages.
 */

/** A new gateway request id, `req_` + 32 hex digits. */
export const newRequestId = (): string => `req_${Bun.randomUUIDv7().replaceAll('-', '')}`
