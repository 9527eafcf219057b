// gateItems with a gate that waits in the middle of a read (a reservation growing): admitted
// after a wait then more items, refused after a wait, two waits in one read. The items kept, the
// ending pushed once, no item shown to the gate twice.
import { describe, expect, test } from 'bun:test'
import { gateItems, gateRead } from '../../src/pipeline/stream/items.ts'
import type { OutputGate } from '../../src/pipeline/stream/types.ts'

/** A gate answering `answers[item]` (a promise where it waits; admitted when unnamed), recording what it saw. */
function fakeGate(answers: Record<string, boolean | Promise<boolean>>) {
  const seen: string[] = []
  let endings = 0
  const gate: OutputGate<string> = {
    admit(item) {
      seen.push(item)
      return answers[item] ?? true
    },
    ending() {
      endings++
      return ['END']
    },
  }
  return { gate, seen, endings: () => endings }
}

const five = (): string[] => ['a', 'b', 'c', 'd', 'e']

describe('gateItems with a waiting gate', () => {
  test('admitted after a wait, then more items: all kept, no ending', async () => {
    const g = fakeGate({ b: Promise.resolve(true) })
    const items = five()
    const out = gateItems(g.gate, items)
    expect(out).toBeInstanceOf(Promise)
    expect(await out).toBe(false)
    expect(items).toEqual(five())
    expect(g.seen).toEqual(five())
    expect(g.endings()).toBe(0)
  })

  test('two waits in one read, both admitted: all kept, each item gated once', async () => {
    const g = fakeGate({ b: Promise.resolve(true), d: Promise.resolve(true) })
    const items = five()
    expect(await gateItems(g.gate, items)).toBe(false)
    expect(items).toEqual(five())
    expect(g.seen).toEqual(five())
    expect(g.endings()).toBe(0)
  })

  test('refused after a wait: the items before kept, the ending once in place of the rest', async () => {
    const g = fakeGate({ c: Promise.resolve(false) })
    const items = five()
    expect(await gateItems(g.gate, items)).toBe(true)
    expect(items).toEqual(['a', 'b', 'END'])
    expect(g.seen).toEqual(['a', 'b', 'c'])
    expect(g.endings()).toBe(1)
  })

  test('admitted after one wait, refused after the second: ending once, none gated twice', async () => {
    const g = fakeGate({ b: Promise.resolve(true), d: Promise.resolve(false) })
    const items = five()
    expect(await gateItems(g.gate, items)).toBe(true)
    expect(items).toEqual(['a', 'b', 'c', 'END'])
    expect(g.seen).toEqual(['a', 'b', 'c', 'd'])
    expect(g.endings()).toBe(1)
  })

  test('no wait: an answer at once, not a promise', () => {
    const g = fakeGate({ d: false })
    const items = five()
    expect(gateItems(g.gate, items)).toBe(true)
    expect(items).toEqual(['a', 'b', 'c', 'END'])
  })
})

describe("gateRead (the stream writer's step)", () => {
  test('refused after a wait: onShut once; already shut: the read dropped, the gate not asked', async () => {
    const g = fakeGate({ b: Promise.resolve(true), d: Promise.resolve(false) })
    let shut = 0
    const items = five()
    const waiting = gateRead(g.gate, items, false, () => shut++)
    expect(waiting).toBeInstanceOf(Promise)
    await waiting
    expect(shut).toBe(1)
    expect(items).toEqual(['a', 'b', 'c', 'END'])
    const later = five()
    expect(gateRead(g.gate, later, true, () => shut++)).toBeUndefined()
    expect(later).toEqual([])
    expect(g.seen).toEqual(['a', 'b', 'c', 'd'])
    expect(shut).toBe(1)
  })

  test('no gate: the items as they are', () => {
    const items = five()
    expect(gateRead(undefined, items, false, () => {})).toBeUndefined()
    expect(items).toEqual(five())
  })
})
