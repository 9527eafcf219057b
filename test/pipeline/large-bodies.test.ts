/**
 * `LargeBodies` (DESIGN §16): one full collection, on the next turn, once the large bodies whose
 * requests ended since the last one pass a quarter of those in flight (at least `COLLECT_MIN`), or
 * before the next body is read once they pass `COLLECT_MIN`; small bodies never count.
 */
import { expect, test } from 'bun:test'
import { COLLECT_MIN, LARGE_BODY, LargeBodies } from '../../src/pipeline/large-bodies.ts'

const MB = 1024 * 1024

/** A `LargeBodies` whose collections are counted, and run when `turn()` ends the turn. */
function counted() {
  const state = { collected: 0, due: [] as (() => void)[] }
  const bodies = new LargeBodies(
    () => state.collected++,
    (run) => state.due.push(run),
  )
  const turn = () => {
    for (const run of state.due.splice(0)) run()
  }
  return { bodies, state, turn }
}

test('small bodies never collect; large ones every COLLECT_MIN ended while few are in flight', () => {
  const { bodies, state, turn } = counted()
  for (let i = 0; i < 1000; i++) bodies.done(bodies.read(LARGE_BODY - 1))
  turn()
  expect(state.collected).toBe(0)
  // One 10 MB body at a time, each done before the next: a collection at every second one (20 MB
  // ended passes COLLECT_MIN).
  expect(COLLECT_MIN).toBe(16 * MB)
  for (let i = 0; i < 16; i++) {
    bodies.done(bodies.read(10 * MB))
    turn()
  }
  expect(state.collected).toBe(8)
})

test('reading collects nothing: only what ended is dead', () => {
  const { bodies, state, turn } = counted()
  for (let i = 0; i < 48; i++) bodies.read(10 * MB)
  turn()
  expect(state.collected).toBe(0)
})

test('with many in flight and none arriving, a collection per quarter of them ended', () => {
  const { bodies, state, turn } = counted()
  // 48 × 10 MB in flight: 480 MB; they end one a turn, no body read meanwhile.
  const open = Array.from({ length: 48 }, () => bodies.read(10 * MB))
  for (const c of open) {
    bodies.done(c)
    turn()
  }
  // At a quarter of those then in flight (100 MB ended, 380 in flight; then 80, 60, 50, 40, 30,
  // 30), then at COLLECT_MIN (20 MB, four times): 11, not one per 20 MB (24).
  expect(state.collected).toBe(11)
})

test('with bodies arriving, one per COLLECT_MIN ended, collected before the next is read', () => {
  const { bodies, state, turn } = counted()
  // 48 × 10 MB in flight, each replaced as it ends: a body arriving is what the dead would be
  // held beside, so a quarter of those in flight (~120 MB) is not waited for.
  const open = Array.from({ length: 48 }, () => bodies.read(10 * MB))
  for (let i = 0; i < 48; i++) {
    bodies.done(open[i]!)
    turn()
    bodies.reading()
    open[i] = bodies.read(10 * MB)
  }
  // 480 MB ended, a collection at every second one (20 MB passes COLLECT_MIN): 24.
  expect(state.collected).toBe(24)
})

test('a burst of requests ending together is collected at once, by one collection', () => {
  const { bodies, state, turn } = counted()
  // 16 × 8 MB in flight (the hostile-memory test's flood), all ending in one turn: 128 MB dead,
  // collected on the next turn — not left until more bodies have been read.
  const open = Array.from({ length: 16 }, () => bodies.read(8 * MB))
  for (const c of open) bodies.done(c)
  expect(state.collected).toBe(0)
  turn()
  expect(state.collected).toBe(1)
  // Counted from zero after it: the next two 8 MB bodies ended make the next one.
  bodies.done(bodies.read(8 * MB))
  turn()
  expect(state.collected).toBe(1)
  bodies.done(bodies.read(8 * MB))
  turn()
  expect(state.collected).toBe(2)
})

test('the dead are collected before the next body is read, not after the turn, and once', () => {
  const { bodies, state, turn } = counted()
  // A burst of 12 ends (96 MB dead); the turn that would collect comes only after more bodies
  // were read (their pieces resolve as microtasks, ahead of it: the hostile-memory test's
  // embeddings flood on a quiet host read four more, +26 MB, with the 96 MB dead).
  const open = Array.from({ length: 16 }, () => bodies.read(8 * MB))
  for (const c of open.slice(0, 12)) bodies.done(c)
  expect(state.collected).toBe(0)
  // A request about to read its body collects first (prepare.ts).
  bodies.reading()
  expect(state.collected).toBe(1)
  // The turn's collection finds nothing due.
  turn()
  expect(state.collected).toBe(1)
  // Read without `reading` first (a body already arriving when the burst ended): collected at its read.
  for (const c of open.slice(12)) bodies.done(c)
  expect(state.collected).toBe(1)
  bodies.read(8 * MB)
  expect(state.collected).toBe(2)
  turn()
  expect(state.collected).toBe(2)
  // Under COLLECT_MIN dead (one 8 MB body): nothing collected.
  bodies.done(bodies.read(8 * MB))
  bodies.reading()
  expect(state.collected).toBe(2)
})
