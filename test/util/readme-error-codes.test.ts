/**
 * The error-code list ("Error codes (the gateway's own; …)", on the HTTP API page,
 * docs/http-api.md; the README's "HTTP API" section before issue 47) names every
 * code the gateway can answer, with the status it comes with. It lacked several an upstream's
 * refusal maps to (`upstream_permission_denied`, `upstream_not_found`,
 * `upstream_precondition_failed`, `upstream_invalid_request`, `upstream_request_too_large`) and
 * the Gemini adapter's `invalid_tool_call_id`, so a client meeting one found nothing to read.
 *
 * The codes are read from the source as text: every `new GatewayError(status, 'code', …)`, every
 * error-rule table entry (`status: N, code: '…'`), the literals a local helper passes on as its
 * `code` parameter (`bad(param, 'invalid_type', …)`), and a `const code = … ? 'a' : 'b'`. A
 * construction whose code is none of these fails the test until this file learns where its codes
 * come from: the list stays complete only if no code can slip past the scan.
 */
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { REPO } from '../support/cli.ts'
import { tsFiles } from '../support/ts-files.ts'

const SRC = join(REPO, 'src')
const CODE = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/
const LITERAL = /^(['"`])([a-z0-9_]+)\1$/
/** `const code = cond ? 'a' : 'b'`, the code a validation error picks (invalid_type or invalid_value). */
const TERNARY = /\bconst code\s*=\s*[^\n?]+\?\s*'([a-z0-9_]+)'\s*:\s*'([a-z0-9_]+)'/

/**
 * Codes a `new GatewayError` takes from an expression, not a literal, and why the scan's other
 * rules already see every value it can have.
 */
const PASSED_ON: Record<string, string> = {
  // A GatewayError rebuilt from another (redaction, a retry's last error): its code was scanned there.
  'err.code': 'copies an error made elsewhere',
  'e.code': 'copies an error made elsewhere',
  // The error-rule tables' entries are scanned as `status: N, code: '…'`.
  'rule.code': 'an error-rule table entry',
  // An upstream's own 4xx code (not the gateway's; README says it is kept), else the literal.
  "up.code ?? 'upstream_error'": "an upstream's own code, else upstream_error",
  // `switchyard reload` relays the running gateway's refusal: its codes are scanned where the gateway makes them.
  "answer.code ?? 'upstream_error'": "the gateway's own code, relayed by the CLI, else upstream_error",
}

/**
 * The gateway's own failure codes named once (src/util/errors.ts `GATEWAY_FAILURE`), read from its
 * text as the rest is: a `new GatewayError(…, GATEWAY_FAILURE.name, …)` takes that entry's code.
 */
const GATEWAY_FAILURE: Record<string, string> = (() => {
  const text = readFileSync(join(SRC, 'util/errors.ts'), 'utf8')
  const body = /export const GATEWAY_FAILURE = \{([^}]*)\}/.exec(text)?.[1] ?? ''
  return Object.fromEntries([...body.matchAll(/(\w+):\s*'([a-z0-9_]+)'/g)].map((m) => [m[1]!, m[2]!]))
})()

interface Found {
  code: string
  /** The status it is answered with, when the source writes it as a number. */
  status: number | null
  where: string
}

/** Source without comment lines (doc comments hold example codes, e.g. `withFacts(err, {code})`). */
function withoutComments(source: string): string {
  return source
    .split('\n')
    .map((l) => (/^\s*(?:\/\/|\/\*\*?|\*)/.test(l) ? '' : l))
    .join('\n')
}

/** The arguments of the call whose `(` is at `open`, as text (quotes, templates and brackets respected). */
function callArgs(text: string, open: number): string[] {
  const args: string[] = []
  let depth = 0
  let start = open + 1
  for (let i = open + 1; i < text.length; i++) {
    const c = text[i]!
    if (c === "'" || c === '"' || c === '`') {
      i = stringEnd(text, i)
      continue
    }
    if (c === '(' || c === '[' || c === '{') depth++
    else if (c === ')' || c === ']' || c === '}') {
      if (depth === 0) {
        args.push(text.slice(start, i).trim())
        return args
      }
      depth--
    } else if (c === ',' && depth === 0) {
      args.push(text.slice(start, i).trim())
      start = i + 1
    }
  }
  return args
}

/** The index of the quote closing the string that opens at `at` (a template's `${…}` skipped). */
function stringEnd(text: string, at: number): number {
  const q = text[at]!
  for (let i = at + 1; i < text.length; i++) {
    const c = text[i]!
    if (c === '\\') i++
    else if (c === q) return i
    else if (q === '`' && c === '$' && text[i + 1] === '{') {
      let depth = 0
      for (i++; i < text.length; i++) {
        if (text[i] === '{') depth++
        else if (text[i] === '}' && --depth === 0) break
        else if (text[i] === '`' || text[i] === "'" || text[i] === '"') i = stringEnd(text, i)
      }
    }
  }
  return text.length
}

const statusOf = (arg: string | undefined) => (arg && /^\d{3}$/.test(arg) ? Number(arg) : null)

/** Every code the source can answer with, and the constructions the scan could not follow. */
export function scanCodes(files: Array<{ where: string; source: string }>): {
  found: Found[]
  unknown: string[]
} {
  const found: Found[] = []
  const unknown: string[] = []
  for (const { where, source } of files) {
    const text = withoutComments(source)
    const add = (code: string, status: number | null) => {
      if (CODE.test(code)) found.push({ code, status, where })
    }
    // Helpers that hand a `code` parameter to `new GatewayError`: name → (index of code, status).
    const helpers = new Map<string, { index: number; status: number | null }>()
    for (const m of text.matchAll(/new GatewayError\(/g)) {
      const [status, code] = callArgs(text, m.index + m[0].length - 1)
      const lit = LITERAL.exec(code ?? '')
      if (lit) {
        add(lit[2]!, statusOf(status))
        continue
      }
      if (code === 'code') {
        const helper = enclosingHelper(text, m.index)
        if (helper) helpers.set(helper.name, { index: helper.index, status: statusOf(status) })
        // else: a `const code = … ? 'a' : 'b'` in the same function, scanned below
        if (helper || TERNARY.test(text)) continue
      }
      const named = /^GATEWAY_FAILURE\.(\w+)$/.exec(code ?? '')
      if (named && GATEWAY_FAILURE[named[1]!]) {
        add(GATEWAY_FAILURE[named[1]!]!, statusOf(status))
        continue
      }
      if (code !== undefined && code in PASSED_ON) {
        for (const l of code.matchAll(/'([a-z0-9_]+)'/g)) add(l[1]!, null)
        continue
      }
      unknown.push(`${where}: new GatewayError(${status}, ${code}, …)`)
    }
    for (const [name, { index, status }] of helpers) {
      for (const m of text.matchAll(new RegExp(`\\b${name}\\(`, 'g'))) {
        const arg = callArgs(text, m.index + m[0].length - 1)[index]
        const lit = LITERAL.exec(arg ?? '')
        if (lit) add(lit[2]!, status)
      }
    }
    for (const m of text.matchAll(new RegExp(TERNARY, 'g'))) {
      add(m[1]!, null)
      add(m[2]!, null)
    }
    for (const m of text.matchAll(/\bstatus:\s*(\d{3}),\s*code:\s*'([a-z0-9_]+)'/g)) add(m[2]!, Number(m[1]))
  }
  return { found, unknown }
}

/** The function around `at` if it takes a parameter named `code`: its name and that parameter's index. */
function enclosingHelper(text: string, at: number): { name: string; index: number } | null {
  const head = /(?:function\s+(\w+)|(?:const|let)\s+(\w+)\s*=\s*)\(([^)]*)\)[^{\n]*(?:=>\s*)?\{?\s*$/gm
  let last: { name: string; index: number } | null = null
  for (const m of text.slice(0, at).matchAll(head)) {
    const params = m[3]!.split(',').map((p) => p.trim().split(/[:?=\s]/)[0])
    last = { name: (m[1] ?? m[2])!, index: params.indexOf('code') }
  }
  return last && last.index >= 0 ? last : null
}

/** The HTTP API page's list: each code with the statuses it is listed under. */
export function readmeCodes(readme: string): Map<string, Set<number>> {
  const start = readme.indexOf("Error codes (the gateway's own")
  const end = readme.indexOf('\n\n', start)
  expect(start).toBeGreaterThanOrEqual(0)
  const list = readme.slice(start, end)
  const out = new Map<string, Set<number>>()
  let status = 0
  // A status opens its group where it stands before a code: `; 401 \`invalid_api_key\``.
  // A sentence after the list ("An upstream 4xx otherwise …") belongs to no status.
  for (const m of list.matchAll(/(?:(?:^|[:;]\s+)(\d{3})\s+)?`([^`]+)`|\.\s+[A-Z]/g)) {
    if (m[2] === undefined) {
      status = 0
      continue
    }
    if (m[1]) status = Number(m[1])
    if (!CODE.test(m[2]!)) continue
    if (!out.has(m[2]!)) out.set(m[2]!, new Set())
    out.get(m[2]!)!.add(status)
  }
  return out
}

describe("the HTTP API page's error-code list", () => {
  const files = tsFiles(SRC).map((f) => ({ where: relative(REPO, f), source: readFileSync(f, 'utf8') }))
  const { found, unknown } = scanCodes(files)
  const listed = readmeCodes(readFileSync(join(REPO, 'docs/http-api.md'), 'utf8'))

  test('the scan follows every GatewayError the source makes', () => {
    expect(found.length).toBeGreaterThan(100)
    expect(unknown).toEqual([])
  })

  test('names every code the gateway can answer', () => {
    const missing = [...new Set(found.map((f) => f.code))].filter((c) => !listed.has(c)).sort()
    const at = missing.map((c) => `${c} (${found.find((f) => f.code === c)!.where})`)
    expect(at).toEqual([])
  })

  test('lists each code under the status the source answers it with', () => {
    const wrong = found
      .filter((f) => f.status !== null && listed.has(f.code) && !listed.get(f.code)!.has(f.status))
      .map(
        (f) => `${f.status} ${f.code} (${f.where}; docs/http-api.md: ${[...listed.get(f.code)!].join(', ')})`,
      )
    expect([...new Set(wrong)]).toEqual([])
  })
})

describe('the scan', () => {
  const source = `
import { GatewayError } from '../util/errors.ts'
/** new GatewayError(400, 'in_a_comment', 'skipped') */
const RULES = { teapot: { status: 502, code: 'from_rule', message: (d: string) => d } }
export const a = () => new GatewayError(418, 'literal_code', \`a, \${[1, 2].join(',')} (\${'x'})\`, { param: 'p' })
function bad(param: string, code: string, message: string): GatewayError {
  return new GatewayError(400, code, message, { param })
}
export const b = () => bad('input', 'from_helper', 'm')
export function c(x: boolean) {
  const code = x ? 'from_ternary_a' : 'from_ternary_b'
  return new GatewayError(400, code, 'm')
}
export const d = (err: GatewayError) => new GatewayError(err.status, err.code, 'm')
export const e = () => new GatewayError(500, mystery(), 'm')
`
  test('finds literals, rule tables, helpers and ternaries, and refuses what it cannot follow', () => {
    const { found, unknown } = scanCodes([{ where: 'x.ts', source }])
    expect(found.map((f) => `${f.status} ${f.code}`).sort()).toEqual([
      '400 from_helper',
      '418 literal_code',
      '502 from_rule',
      'null from_ternary_a',
      'null from_ternary_b',
    ])
    expect(unknown).toEqual(['x.ts: new GatewayError(500, mystery(), …)'])
  })

  test("reads README's statuses from where each group opens", () => {
    const list = readmeCodes(
      "Error codes (the gateway's own): 400 `a_b`, `c` (see `d_e`: OpenAI's 429 `x_y`); 401 `f`;\n502\n`g`. Else `i`.\n\nlater `h`",
    )
    expect(Object.fromEntries([...list].map(([k, v]) => [k, [...v]]))).toEqual({
      a_b: [400],
      c: [400],
      d_e: [400],
      x_y: [400],
      f: [401],
      g: [502],
      i: [0],
    })
  })
})
