/**
 * @module
 * Repeated measurements as median with min–max, the markdown table (metric, value, target,
 * pass/miss), and the JSON file under bench-results/.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

export interface Series {
  median: number
  min: number
  max: number
  values: number[]
}

export function series(values: number[]): Series {
  const v = values.filter((x) => Number.isFinite(x))
  if (v.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN, values }
  const s = [...v].sort((a, b) => a - b)
  const mid = s.length >> 1
  const median = s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
  return { median, min: s[0]!, max: s[s.length - 1]!, values }
}

export type Verdict = 'pass' | 'miss' | 'info'

export interface Row {
  metric: string
  value: string
  target: string
  result: Verdict
}

export interface Target {
  op: '>=' | '<=' | '=='
  value: number
  /** How the target reads in the table. */
  text: string
}

export function judge(value: number, t: Target | null): Verdict {
  if (!t) return 'info'
  if (!Number.isFinite(value)) return 'miss'
  if (t.op === '>=') return value >= t.value ? 'pass' : 'miss'
  if (t.op === '<=') return value <= t.value ? 'pass' : 'miss'
  return value === t.value ? 'pass' : 'miss'
}

/** `fmt(3.14159, 2)` → "3.14"; thousands separated; NaN → "n/a". */
export function fmt(x: number, digits = 0): string {
  if (!Number.isFinite(x)) return 'n/a'
  return x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
}

/** "median (min–max) unit"; a single value prints alone. */
export function fmtSeries(s: Series, digits: number, unit: string): string {
  const u = unit ? ` ${unit}` : ''
  if (s.values.length <= 1 || s.min === s.max) return `${fmt(s.median, digits)}${u}`
  return `${fmt(s.median, digits)}${u} (${fmt(s.min, digits)}–${fmt(s.max, digits)})`
}

export function row(metric: string, value: string, judged: number, target: Target | null): Row {
  return { metric, value, target: target?.text ?? '—', result: judge(judged, target) }
}

export function renderTable(rows: Row[]): string {
  const head = '| metric | value | target | result |\n|---|---|---|---|'
  const mark = (r: Verdict) => (r === 'pass' ? 'pass' : r === 'miss' ? '**MISS**' : 'info')
  return [head, ...rows.map((r) => `| ${r.metric} | ${r.value} | ${r.target} | ${mark(r.result)} |`)].join(
    '\n',
  )
}

/** Writes `bench-results/<timestamp>.json`; returns the path. */
export function writeResults(repo: string, doc: unknown): string {
  const dir = join(repo, 'bench-results')
  mkdirSync(dir, { recursive: true })
  const stamp = new Date().toISOString().replace(/[:.]/g, '-')
  const path = join(dir, `${stamp}.json`)
  writeFileSync(path, `${JSON.stringify(doc, null, 2)}\n`)
  return path
}
