import { describe, expect, test } from 'bun:test'
import { clip } from '../../src/util/text.ts'

const KEY = `sk-sy-AbCdEf${'0123456789'.repeat(3)}xyzw` // 6 display characters, 40 in all

describe('clip', () => {
  test('cuts at max characters with an ellipsis; shorter text is kept', () => {
    expect(clip('abc', 3)).toBe('abc')
    expect(clip('abcd', 3)).toBe('abc…')
    expect(clip('x'.repeat(150))).toBe(`${'x'.repeat(100)}…`)
  })

  // The mask ran after the cut: a key cut in two is no longer key-shaped, and its head came back.
  test('masks a key before cutting, wherever the cut falls in it', () => {
    for (let pad = 60; pad <= 100; pad++) {
      const out = clip(`${'x'.repeat(pad)} ${KEY} tail`)
      expect({ pad, secret: out.includes('AbCdEf0') }).toEqual({ pad, secret: false })
      expect(out.replace(/…$/, '')).toBe(`${'x'.repeat(pad)} sk-sy-AbCdEf… tail`.slice(0, 100))
    }
  })

  test("masks a provider's key to its prefix, in any case; names that only contain one of those prefixes stay", () => {
    const openai = `sk-proj-${'Q7wErTy9UiOp3AsDf6GhJkL2'.repeat(3)}`
    expect(clip(`model ${openai}`, 30)).toBe('model sk-…')
    expect(clip(`model ${openai}`.toLowerCase(), 30)).toBe('model sk-…')
    expect(clip(`AIza${'b'.repeat(35)}/x`)).toBe('AIza…/x')
    for (const name of [
      'risk-assessment-model-v2-large',
      'demo/task-runner-for-long-agent-jobs',
      'sk-short',
    ]) {
      expect(clip(name)).toBe(name)
    }
  })
})
