import { expect, test } from 'bun:test'
import { newRequestId } from '../../src/util/ids.ts'

test('newRequestId: req_ + 32 hex digits, the UUIDv7 without dashes, increasing with time', async () => {
  const ids = [newRequestId()]
  await Bun.sleep(2)
  ids.push(newRequestId())
  for (const id of ids) {
    expect(id).toMatch(/^req_[0-9a-f]{32}$/)
    expect(id[4 + 12]).toBe('7') // the version nibble
  }
  expect(ids[0]! < ids[1]!).toBe(true)
  expect(new Set(Array.from({ length: 1000 }, newRequestId)).size).toBe(1000)
})
