/**
 * @module
 * Request ids. UUIDv7 (time first, then random): unique per request and increasing with time,
 * so the usage log's UNIQUE index on them grows at its right edge instead of at random pages.
 */

/**
 * A new gateway request id, `req_` + 32 hex digits: the UUID without its dashes. Cut out by
 * position (runs per request; `replaceAll('-', '')` measured ≈ 1–3 µs, this ≈ 0.25 µs).
 */
export const newRequestId = (): string => {
  const u = Bun.randomUUIDv7()
  return `req_${u.slice(0, 8)}${u.slice(9, 13)}${u.slice(14, 18)}${u.slice(19, 23)}${u.slice(24)}`
}
