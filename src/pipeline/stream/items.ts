/**
 * @module
 * What the stream writer does with the items of one read: shows them to the output gate, then
 * encodes them into one write for the client.
 */
import type { StreamEncoder } from './encoder.ts'
import type { OutputGate } from './types.ts'

const utf8 = new TextEncoder()

/**
 * `items` through `gate`: from the first it refuses on, its ending in their place (`items` is
 * edited). True when it refused one: the stream ends once the ending is written. A promise only
 * when the gate waits (a reservation growing); an answer at once otherwise — no async call a read.
 */
export function gateItems<T>(gate: OutputGate<T>, items: T[], from = 0): boolean | Promise<boolean> {
  for (let i = from; i < items.length; i++) {
    const ok = gate.admit(items[i]!)
    if (ok === true) continue
    if (ok === false) return shut(gate, items, i)
    return waited(gate, items, i, ok)
  }
  return false
}

/**
 * A read's `items` through `gate` (none: as they are); `shut` when the gate refused one in an
 * earlier read: they are dropped. `onShut` when it refuses one now: its ending is in `items` and
 * the stream ends once that is written. A promise only while the gate waits (a growth): no async
 * call a read otherwise.
 */
export function gateRead<T>(
  gate: OutputGate<T> | undefined,
  items: T[],
  shut: boolean,
  onShut: () => void,
): void | Promise<void> {
  if (gate === undefined || items.length === 0) return
  if (shut) {
    items.length = 0
    return
  }
  const refused = gateItems(gate, items)
  if (refused === true) onShut()
  else if (refused !== false) return shutWhen(refused, onShut)
}

async function shutWhen(refused: Promise<boolean>, onShut: () => void): Promise<void> {
  if (await refused) onShut()
}

/** Item `i` waited for the gate: the rest gated after it. Apart, so `gateItems` makes no scope a call. */
function waited<T>(gate: OutputGate<T>, items: T[], i: number, ok: Promise<boolean>): Promise<boolean> {
  return ok.then((yes) => (yes ? gateItems(gate, items, i + 1) : shut(gate, items, i)))
}

/** Refused at item `i`: the gate's ending in place of it and the rest. */
function shut<T>(gate: OutputGate<T>, items: T[], i: number): true {
  items.length = i
  for (const item of gate.ending()) items.push(item)
  return true
}

/**
 * Encodes `items` (emptied) into one write to `sink`; false when the encoder withheld them all
 * (e.g. a usage chunk nobody asked for). An item that throws: the ones before it go out first.
 */
export function encodeItems<T>(
  encoder: StreamEncoder<T>,
  items: T[],
  sink: (bytes: Uint8Array) => void,
): boolean {
  let wrote = false
  try {
    if (encoder.encodeText) {
      let out = ''
      try {
        for (let i = 0; i < items.length; i++) out += encoder.encodeText(items[i]!) ?? ''
      } finally {
        // Also when an item throws: the ones before it go out first, then the error frame.
        if (out !== '') {
          sink(utf8.encode(out))
          wrote = true
        }
      }
    } else {
      // One write per read, as the text path makes: the items of a read framed one event each (a
      // gated pass-through) would otherwise be an enqueue, and a socket write, an event.
      let first: Uint8Array | null = null
      let more: Uint8Array[] | null = null
      try {
        for (let i = 0; i < items.length; i++) {
          const bytes = encoder.encode(items[i]!)
          if (bytes === null) continue
          if (first === null) first = bytes
          else {
            more ??= [first]
            more.push(bytes)
          }
        }
      } finally {
        // Also when an item throws: the ones before it go out first, then the error frame.
        if (first !== null) {
          sink(more === null ? first : Buffer.concat(more))
          wrote = true
        }
      }
    }
  } finally {
    items.length = 0
  }
  return wrote
}
