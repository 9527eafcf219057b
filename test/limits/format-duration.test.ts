import { describe, expect, test } from 'bun:test'
import { formatDuration } from '../../src/limits/headers.ts'

/** Go's time.Duration.String() for whole milliseconds, as OpenAI's reset headers print it. */
function goDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`
  const h = Math.floor(ms / 3_600_000)
  const m = Math.floor((ms % 3_600_000) / 60_000)
  const s = ms % 60_000
  const frac = String(s % 1000)
    .padStart(3, '0')
    .replace(/0+$/, '')
  const sec = `${Math.floor(s / 1000)}${frac ? `.${frac}` : ''}s`
  return h ? `${h}h${m}m${sec}` : m ? `${m}m${sec}` : sec
}

describe('formatDuration (x-ratelimit-reset-*)', () => {
  test('each fraction of a second as Go prints it: trailing zeros dropped, leading ones kept', () => {
    expect(formatDuration(7_000)).toBe('7s')
    expect(formatDuration(7_500)).toBe('7.5s')
    expect(formatDuration(7_050)).toBe('7.05s')
    expect(formatDuration(7_005)).toBe('7.005s')
    expect(formatDuration(7_250)).toBe('7.25s')
    expect(formatDuration(7_125)).toBe('7.125s')
    expect(formatDuration(59_970)).toBe('59.97s')
    expect(formatDuration(60_000)).toBe('1m0s')
    expect(formatDuration(360_000)).toBe('6m0s')
    expect(formatDuration(86_399_970)).toBe('23h59m59.97s')
  })

  test('below a second in ms; rounded up to the millisecond; never negative', () => {
    expect(formatDuration(20)).toBe('20ms')
    expect(formatDuration(0.2)).toBe('1ms')
    expect(formatDuration(999.5)).toBe('1s')
    expect(formatDuration(-5)).toBe('0ms')
  })

  test('every millisecond of the first three minutes, and spread over three days, matches Go', () => {
    for (let ms = 0; ms < 180_000; ms++) if (formatDuration(ms) !== goDuration(ms)) expect(ms).toBe(-1)
    for (let ms = 180_000; ms < 3 * 86_400_000; ms += 9_973)
      if (formatDuration(ms) !== goDuration(ms)) expect(ms).toBe(-1)
  })
})
