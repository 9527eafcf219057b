/**
 * @module
 * How the input-token bound was chosen (issues 21 and 41): each candidate's conservativeness on
 * the corpus of `test/support/token-corpus.ts`, the chosen bound's ratios (reserved ÷ billed) per
 * text kind and provider family (BENCHMARKS.md), and the cost in µs per 64 KB prompt.
 *
 *   bun scripts/bench/estimate-tokens.ts                 # the tables
 *   TOKENIZERS_DIR=/path/node_modules bun scripts/bench/estimate-tokens.ts --write-counts
 *
 * With `TOKENIZERS_DIR` naming a node_modules that holds `@lenml/tokenizer-{claude,gemini,llama2,
 * llama3}` 3.7.2 (measurement tools, not dependencies; `claude` is Anthropic's published tokenizer,
 * the same counts as `@anthropic-ai/tokenizer`; `gemini` is Gemma's SentencePiece), the
 * synthetic samples are also counted with those, and `--write-counts` pins the counts in
 * `test/support/token-corpus-counts.json` for the unit test.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { countTokens as cl100k } from 'gpt-tokenizer/encoding/cl100k_base'
import { countTokens as o200k } from 'gpt-tokenizer/encoding/o200k_base'
import { type InputTarget, inputTokenBound } from '../../src/limits/estimate-tokens.ts'
import { type Family, shapeBound, textShape } from '../../src/limits/text-bound.ts'
import { estimateTokens, requestTextChars } from '../../src/usage/estimate.ts'
import { reportedSamples, syntheticSamples } from '../../test/support/token-corpus.ts'

type Count = (text: string) => number
const bytesOf = (s: string) => Buffer.byteLength(s)

/** A candidate estimates a body's input tokens. */
/** The chosen bound of each body, for an unknown model (`any`: it must cover every tokenizer). */
const chosen = new Map<string, number>()
const ANY: InputTarget[] = [{ kind: 'openai', model: 'm' }]
for (const b of [...reportedSamples().map((s) => s.body), ...syntheticSamples().map((s) => s.body)])
  chosen.set(b, (await inputTokenBound(JSON.parse(b), ANY)).tokens)

const candidates: Record<string, (body: string) => number> = {
  'family bound, any model (chosen)': (body) => chosen.get(body)!,
  'body bytes (issue 21, less its allowances)': (body) => bytesOf(body),
  'bytes/2': (body) => Math.ceil(bytesOf(body) / 2),
  'bytes/3': (body) => Math.ceil(bytesOf(body) / 3),
  'text chars/4 (usage/estimate.ts)': (body) => estimateTokens(requestTextChars(body)),
  'o200k of text + 3/message + 3': (body) => o200kMessages(body),
  'o200k of the whole body': (body) => o200k(body),
}

function o200kMessages(body: string): number {
  const parsed = JSON.parse(body) as Record<string, unknown>
  const { model: _m, ...rest } = parsed
  const messages = Array.isArray(parsed.messages) ? parsed.messages.length : 1
  let text = ''
  const stack: unknown[] = [rest]
  while (stack.length) {
    const v = stack.pop()
    if (typeof v === 'string') text += v
    else if (v && typeof v === 'object') stack.push(...Object.values(v))
  }
  return o200k(text) + 3 * messages + 3
}

async function referenceTokenizers(): Promise<Record<string, Count>> {
  const out: Record<string, Count> = { o200k, cl100k }
  const dir = process.env.TOKENIZERS_DIR
  if (!dir) return out
  for (const name of ['claude', 'gemini', 'llama2', 'llama3']) {
    const tok = (await import(join(dir, `@lenml/tokenizer-${name}`))).fromPreTrained()
    out[name] = (s: string) => tok.encode(s, { add_special_tokens: false }).length
  }
  return out
}

/** Template tokens a one-message chat adds around its text, for any model (OpenAI's is 3 + 3). */
const TEMPLATE_ALLOWANCE = 8

async function conservativeness(tokenizers: Record<string, Count>, write: boolean) {
  const pinned: Record<string, Record<string, number>> = {}
  const failures: Record<string, string[]> = Object.fromEntries(Object.keys(candidates).map((k) => [k, []]))
  const ratios: Record<string, number[]> = Object.fromEntries(Object.keys(candidates).map((k) => [k, []]))
  const check = (name: string, body: string, truth: number) => {
    for (const [c, f] of Object.entries(candidates)) {
      const est = f(body)
      ratios[c]!.push(est / truth)
      if (est < truth) failures[c]!.push(`${name} (${est} < ${truth})`)
    }
  }
  for (const s of reportedSamples()) check(s.name, s.body, s.tokens)
  for (const s of syntheticSamples()) {
    const counts = Object.fromEntries(Object.entries(tokenizers).map(([n, f]) => [n, f(s.text)]))
    pinned[s.name] = counts
    for (const [n, c] of Object.entries(counts)) check(`${s.name}@${n}`, s.body, c + TEMPLATE_ALLOWANCE)
  }
  console.log(
    `\nconservativeness: ${reportedSamples().length} reported samples, ${syntheticSamples().length} synthetic × ${Object.keys(tokenizers).length} tokenizers (${Object.keys(tokenizers).join(', ')})`,
  )
  for (const c of Object.keys(candidates)) {
    const f = failures[c]!
    const r = ratios[c]!
    const stat = `estimate/truth min ${Math.min(...r).toFixed(2)} median ${median(r).toFixed(2)} max ${Math.max(...r).toFixed(2)}`
    console.log(
      `  ${c.padEnd(34)} ${stat}  under on ${f.length}${f.length ? `: ${f.slice(0, 4).join(', ')}${f.length > 4 ? ', …' : ''}` : ''}`,
    )
  }
  if (write) {
    const path = join(import.meta.dir, '../../test/support/token-corpus-counts.json')
    writeFileSync(path, `${JSON.stringify(pinned, null, 2)}\n`)
    console.log(`  wrote ${path}`)
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]!
}

/** Text kinds as BENCHMARKS.md groups them. */
function group(kind: string): string {
  if (/^english-prose/.test(kind)) return 'prose'
  if (/^typescript-code/.test(kind)) return 'code'
  if (/^(tool-schemas|json)/.test(kind)) return 'tool schemas, JSON'
  if (/^(chinese|japanese|korean|russian|hindi)$/.test(kind)) return 'other scripts'
  return 'random, repeated, digits'
}

/** Reserved ÷ billed of the text bound per text kind and family: min, median, max. */
async function ratios(tokenizers: Record<string, Count>) {
  if (!tokenizers.claude) {
    console.log('\nratios: need TOKENIZERS_DIR (Claude, Gemini, Llama counts); using the pinned counts')
  }
  const pinned = (await import('../../test/support/token-corpus-counts.json')).default as Record<
    string,
    Record<string, number>
  >
  const billers: Record<Family, string[]> = {
    o200k: ['o200k'],
    cl100k: ['cl100k'],
    claude: ['claude'],
    gemini: ['gemini'],
    any: ['o200k', 'cl100k', 'claude', 'gemini', 'llama2', 'llama3'],
  }
  const cells: Record<string, number[]> = {}
  for (const s of syntheticSamples()) {
    const shape = textShape(s.text)
    for (const [family, who] of Object.entries(billers) as [Family, string[]][]) {
      const billed = Math.max(...who.map((w) => pinned[s.name]![w]!))
      const key = `${group(s.kind)}|${family}`
      cells[key] ??= []
      cells[key].push(shapeBound(shape, family) / billed)
    }
  }
  console.log('\nreserved ÷ billed, text alone (min / median / max), per text kind and family:')
  console.log(
    `  ${'kind'.padEnd(26)}${Object.keys(billers)
      .map((f) => f.padStart(20))
      .join('')}`,
  )
  for (const g of ['prose', 'code', 'tool schemas, JSON', 'other scripts', 'random, repeated, digits']) {
    const line = Object.keys(billers).map((f) => {
      const r = cells[`${g}|${f}`]!
      return `${Math.min(...r).toFixed(2)} / ${median(r).toFixed(2)} / ${Math.max(...r).toFixed(2)}`.padStart(
        20,
      )
    })
    console.log(`  ${g.padEnd(26)}${line.join('')}`)
  }
}

/** µs per call, the median of `runs` timed batches. */
function timeUs(f: () => unknown, runs = 7): number {
  f()
  const per: number[] = []
  for (let r = 0; r < runs; r++) {
    let n = 0
    const t0 = performance.now()
    do {
      f()
      n++
    } while (performance.now() - t0 < 20)
    per.push(((performance.now() - t0) * 1000) / n)
  }
  return median(per)
}

function hostileBodies(size: number): [string, string][] {
  const parts = JSON.stringify({
    model: 'm',
    messages: [
      {
        role: 'user',
        content: Array.from({ length: Math.floor(size / 30) }, () => ({ type: 'text', text: 'x' })),
      },
    ],
  })
  const nested = JSON.stringify({
    model: 'm',
    messages: [{ role: 'user', content: 'x' }],
    metadata: { a: Array.from({ length: size / 4 }, () => [0]) },
  })
  return [
    ['hostile: 2k tiny content parts', parts],
    ['hostile: 16k one-element arrays', nested],
  ]
}

async function cost() {
  const SIZE = 64 * 1024
  const kinds = syntheticSamples(SIZE / 2)
    .filter((s) =>
      [
        'english-prose',
        'typescript-code',
        'json',
        'chinese',
        'emoji',
        'repeat-a',
        'repeat-space',
        'base64',
        'random-cjk',
        'digits',
      ].includes(s.kind),
    )
    .map((s): [string, string] => {
      let text = s.text
      while (bytesOf(text) < SIZE) text += text
      text = Buffer.from(text)
        .subarray(0, SIZE)
        .toString()
        .replace(/\uFFFD+$/, '')
      return [s.kind, JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: text }] })]
    })
  const rows: [string, string][] = [...kinds, ...hostileBodies(SIZE)]
  console.log(
    '\ncost: µs per 64 KB body (median of 7 batches; the chosen bound is timed on new text each call, as the shape cache would miss; JSON.parse for scale)',
  )
  const names = ['JSON.parse', 'family bound (chosen)', 'o200k of text', 'cl100k of text']
  console.log(`  ${'kind'.padEnd(32)}${names.map((n) => n.padStart(30)).join('')}`)
  for (const [kind, body] of rows) {
    const parsed = JSON.parse(body)
    const text = (parsed.messages?.[0]?.content as unknown) ?? ''
    const t = typeof text === 'string' ? text : body
    // gpt-tokenizer caches each piece it encoded, so the same text again is nearly free; a hostile
    // client sends new text every time. Each call gets the text rotated by a new offset.
    let k = 0
    const fresh = () => {
      k = (k + 7919) % t.length
      return t.slice(k) + t.slice(0, k)
    }
    const us = [
      timeUs(() => JSON.parse(body)),
      timeUs(() => textShape(fresh())),
      timeUs(() => o200k(fresh()), 3),
      timeUs(() => cl100k(fresh()), 3),
    ]
    console.log(`  ${kind.padEnd(32)}${us.map((u) => u.toFixed(1).padStart(30)).join('')}`)
  }
}

const tokenizers = await referenceTokenizers()
await conservativeness(tokenizers, process.argv.includes('--write-counts'))
await ratios(tokenizers)
if (!process.argv.includes('--no-cost')) await cost()
