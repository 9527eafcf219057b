/**
 * @module
 * Duplicate keys in one YAML mapping. `Bun.YAML.parse` keeps the last silently (and has no option
 * to refuse them), so a second `server:` or `plans:` block would replace the first unseen. This
 * reads the text of a file that already parsed: block and flow mappings, sequences, quoted keys,
 * comments, block scalars, multi-line flow collections (JSON included). It never decides alone:
 * a mapping's repeated key is reported only when the keys it read for that mapping are exactly
 * the keys the parser produced at that path; anything it does not follow (explicit `?` keys, a
 * key with an anchor, several documents) makes it report nothing, so valid YAML is never refused.
 *
 * @example
 * duplicateKeys('a: 1\nb: 2\na: 3\n', Bun.YAML.parse('a: 1\nb: 2\na: 3\n'))
 * // [{ path: '/a', message: "duplicate key 'a' (lines 1 and 3): ..." }]
 */
import { type Problem, step } from './intact.ts'

interface MapNode {
  kind: 'map'
  indent: number
  path: string[]
  /** Key → the lines it is written on. */
  keys: Map<string, number[]>
  /** The last key, while its value is still to come (on the lines below, or after `:` in flow). */
  open: string | null
}

interface SeqNode {
  kind: 'seq'
  indent: number
  path: string[]
  index: number
}

type Node = MapNode | SeqNode

/** Something this reader does not follow: report nothing rather than guess. */
class Unsure extends Error {}

/** Every key written twice in one mapping of `text`, whose parsed value is `doc`. */
export function duplicateKeys(text: string, doc: unknown): Problem[] {
  let maps: MapNode[]
  try {
    maps = new Reader(text).read()
  } catch (err) {
    if (err instanceof Unsure) return []
    throw err
  }
  const problems: Problem[] = []
  for (const map of maps) {
    const parsed = valueAt(doc, map.path)
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) continue
    const own = Object.keys(parsed)
    if (own.length !== map.keys.size || !own.every((k) => map.keys.has(k))) continue
    for (const [key, lines] of map.keys) {
      if (lines.length < 2) continue
      const where = lines.every((l) => l === lines[0])
        ? `${lines.length} times on line ${lines[0]}`
        : `lines ${lines.slice(0, -1).join(', ')} and ${lines.at(-1)}`
      problems.push({
        path: `/${[...map.path, key].map(step).join('/')}`,
        message: `duplicate key '${key}' (${where}): YAML keeps only the last one, so the others would be ignored; write it once`,
      })
    }
  }
  return problems
}

function valueAt(doc: unknown, path: string[]): unknown {
  let v = doc
  for (const s of path) {
    if (!v || typeof v !== 'object') return undefined
    v = (v as Record<string, unknown>)[s]
  }
  return v
}

/** Sticky: read at `lastIndex`, so a long flow collection is never copied piece by piece. */
const PROPERTY = /[^\s,[\]{}]*/y
const COLON = /[ \t]*:/y

const PLAIN_KEY = /^([^\s#'"{}[\],&*!|>%@`?-][^#]*?|-[^\s#][^#]*?)[ \t]*:(?=[ \t]|$)/

class Reader {
  private readonly lines: string[]
  /** Offset of each line's first character in `text`. */
  private readonly starts: number[] = []
  private readonly maps: MapNode[] = []
  private stack: Node[] = []

  constructor(private readonly text: string) {
    this.lines = text.split('\n').map((l) => l.replace(/\r$/, ''))
    let at = 0
    for (const l of text.split('\n')) {
      this.starts.push(at)
      at += l.length + 1
    }
  }

  read(): MapNode[] {
    let deeper: number | null = null // lines indented past this continue the last value
    let begun = false
    for (let i = 0; i < this.lines.length; i++) {
      const line = this.lines[i]!
      const body = line.trimStart()
      const indent = line.length - body.length
      if (body === '' || body.startsWith('#')) continue
      if (deeper !== null && indent > deeper) continue
      deeper = null
      if (indent === 0 && /^%/.test(body) && !begun) continue
      if (indent === 0 && /^---([ \t]|$)/.test(body)) {
        if (begun || body.slice(3).trim().replace(/^#.*/, '') !== '') throw new Unsure()
        continue
      }
      if (indent === 0 && /^\.\.\.([ \t]|$)/.test(body)) throw new Unsure()
      begun = true
      const end = this.line(i, indent, body)
      if (end === null) continue
      i = end.line
      deeper = end.owner
    }
    return this.maps
  }

  /** One line from `indent`; returns where its value ended (line, and the column owning it) or null if a value is still to come. */
  private line(i: number, indent: number, body: string): { line: number; owner: number } | null {
    let col = indent
    let rest = body
    let dashAt: number | null = null
    while (/^-([ \t]|$)/.test(rest)) {
      this.dash(col)
      dashAt = col
      const after = rest.slice(1)
      col += 1 + after.length - after.trimStart().length
      rest = after.trimStart()
      if (rest === '' || rest.startsWith('#')) return null
    }
    const key = keyOf(rest)
    if (key) {
      const map = this.key(col, key.name, i + 1)
      rest = stripProperties(rest.slice(key.length).trimStart())
      if (rest === '' || rest.startsWith('#')) {
        map.open = key.name
        return null
      }
      return this.value(i, rest, [...map.path, key.name], col)
    }
    if (/^[?&!]/.test(rest)) {
      // `? key`, or properties before a key or before a collection on the lines below
      const bare = stripProperties(rest)
      if (bare === rest || keyOf(bare) || bare === '' || bare.startsWith('#')) throw new Unsure()
      rest = bare
    }
    const path = this.childPath(col)
    // A value alone on its line continues on lines indented past the node that holds it.
    return this.value(i, rest, path, dashAt ?? this.stack.at(-1)?.indent ?? -1)
  }

  /** A value starting at `rest` of line `i`: a flow collection, a quoted scalar, or a plain or block scalar. */
  private value(i: number, rest: string, path: string[], owner: number): { line: number; owner: number } {
    const at = this.starts[i]! + this.lines[i]!.length - rest.length
    if (rest.startsWith('{') || rest.startsWith('['))
      return { line: this.lineOf(this.flow(at, path) - 1), owner }
    if (rest.startsWith('"') || rest.startsWith("'"))
      return { line: this.lineOf(quotedEnd(this.text, at) - 1), owner }
    return { line: i, owner } // its continuation lines (or a block scalar's) are indented past `owner`
  }

  private childPath(col: number): string[] {
    this.popTo(col)
    const top = this.stack.at(-1)
    if (!top) return []
    if (top.kind === 'seq') return [...top.path, String(top.index)]
    if (top.open === null) throw new Unsure()
    const path = [...top.path, top.open]
    top.open = null
    return path
  }

  /** Pops the nodes a node starting at `col` closes: the deeper ones. */
  private popTo(col: number): void {
    while (this.stack.length && this.stack.at(-1)!.indent > col) this.stack.pop()
  }

  private dash(col: number): void {
    this.popTo(col)
    const top = this.stack.at(-1)
    if (top?.kind === 'seq' && top.indent === col) {
      top.index++
      return
    }
    if (top && top.indent === col && (top.kind !== 'map' || top.open === null)) throw new Unsure()
    const path = this.childPath(col)
    this.stack.push({ kind: 'seq', indent: col, path, index: 0 })
  }

  private key(col: number, name: string, line: number): MapNode {
    this.popTo(col)
    let top = this.stack.at(-1)
    if (top?.kind === 'seq' && top.indent === col) {
      this.stack.pop()
      top = this.stack.at(-1)
    }
    let map: MapNode
    if (top?.kind === 'map' && top.indent === col) map = top
    else {
      map = { kind: 'map', indent: col, path: this.childPath(col), keys: new Map(), open: null }
      this.stack.push(map)
      this.maps.push(map)
    }
    map.open = null
    const lines = map.keys.get(name)
    if (lines) lines.push(line)
    else map.keys.set(name, [line])
    return map
  }

  private lineOf(offset: number): number {
    let lo = 0
    let hi = this.starts.length - 1
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1
      if (this.starts[mid]! <= offset) lo = mid
      else hi = mid - 1
    }
    return lo
  }

  /** A flow collection from `at` (its `{` or `[`); returns the offset past its closing bracket. */
  private flow(at: number, path: string[]): number {
    const t = this.text
    const stack: Array<MapNode | SeqNode> = []
    let pos = at
    let first = true
    while (pos < t.length) {
      const c = t[pos]!
      if (c === ' ' || c === '\t' || c === '\r' || c === '\n') {
        pos++
        continue
      }
      if (c === '#' && /[ \t\r\n]/.test(t[pos - 1] ?? ' ')) {
        const nl = t.indexOf('\n', pos)
        pos = nl < 0 ? t.length : nl
        continue
      }
      const top = stack.at(-1)
      if (c === '{' || c === '[') {
        let child: string[]
        if (first) child = path
        else if (!top) throw new Unsure()
        else if (top.kind === 'seq') child = [...top.path, String(top.index)]
        else if (top.open !== null) child = [...top.path, top.open]
        else throw new Unsure() // a collection as a key
        first = false
        if (c === '{') {
          const map: MapNode = { kind: 'map', indent: -1, path: child, keys: new Map(), open: null }
          this.maps.push(map)
          stack.push(map)
        } else stack.push({ kind: 'seq', indent: -1, path: child, index: 0 })
        pos++
        continue
      }
      if (!top) throw new Unsure()
      if (c === '}' || c === ']') {
        stack.pop()
        pos++
        if (!stack.length) return pos
        continue
      }
      if (c === ',') {
        if (top.kind === 'seq') top.index++
        else top.open = null
        pos++
        continue
      }
      if (c === '?') throw new Unsure()
      // A scalar (after any anchor or tag): a key if a ':' follows it in a mapping awaiting one.
      let end: number
      let name: string
      if (c === '&' || c === '!') {
        PROPERTY.lastIndex = pos
        pos += PROPERTY.exec(t)![0].length
        continue
      }
      if (c === '"' || c === "'") {
        end = quotedEnd(t, pos)
        name = unquote(t.slice(pos, end))
      } else {
        end = plainEnd(t, pos)
        name = t.slice(pos, end).trim()
      }
      COLON.lastIndex = end
      const colon = COLON.exec(t)
      if (top.kind === 'seq') {
        if (colon) throw new Unsure() // `[a: 1]`, a single-pair mapping
      } else if (top.open === null) {
        const lines = top.keys.get(name)
        const line = this.lineOf(pos) + 1
        if (lines) lines.push(line)
        else top.keys.set(name, [line])
        top.open = colon ? name : null
        if (colon) end += colon[0].length
      } else if (colon)
        throw new Unsure() // a key where a value belongs
      else top.open = null
      pos = end
    }
    throw new Unsure()
  }
}

/** A block-context key at the start of `rest`: its name and how many characters it and its `:` take. */
function keyOf(rest: string): { name: string; length: number } | null {
  if (rest.startsWith('"') || rest.startsWith("'")) {
    const end = quotedEnd(rest, 0)
    if (rest.slice(0, end).includes('\n')) return null
    const colon = /^[ \t]*:(?=[ \t]|$|[^ \t])/.exec(rest.slice(end))
    if (!colon) return null
    return { name: unquote(rest.slice(0, end)), length: end + colon[0].length }
  }
  const m = PLAIN_KEY.exec(rest)
  return m ? { name: m[1]!.trim(), length: m[0].length } : null
}

/** Drops anchors (`&a`) and tags (`!t`) before a value. */
function stripProperties(rest: string): string {
  while (/^[&!]/.test(rest)) rest = rest.replace(/^[&!][^\s]*[ \t]*/, '')
  return rest
}

/** The offset past the closing quote of the quoted scalar at `at`. */
function quotedEnd(t: string, at: number): number {
  const q = t[at]
  for (let i = at + 1; i < t.length; i++) {
    if (q === '"' && t[i] === '\\') i++
    else if (t[i] === q) {
      if (q === "'" && t[i + 1] === "'") i++
      else return i + 1
    }
  }
  throw new Unsure()
}

/** The offset where a plain scalar in a flow collection ends. */
function plainEnd(t: string, at: number): number {
  let i = at
  while (i < t.length) {
    const c = t[i]!
    if (c === ',' || c === '[' || c === ']' || c === '{' || c === '}') break
    if (c === ':' && /[\s,[\]{}]/.test(t[i + 1] ?? ' ')) break
    if (c === '#' && /[ \t]/.test(t[i - 1] ?? '')) break
    i++
  }
  return i
}

/** A quoted key's text (single-line): JSON's escapes for double quotes, `''` for single. */
function unquote(q: string): string {
  if (q.startsWith("'")) return q.slice(1, -1).replace(/''/g, "'")
  try {
    return JSON.parse(q) as string
  } catch {
    return q // an escape JSON lacks: the parsed key differs, so this mapping is not judged
  }
}
