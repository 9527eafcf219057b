/**
 * Audit finding 7: a key written twice in one mapping was silently last-wins (Bun.YAML.parse
 * accepts it, with no option to refuse): a second `server:` or `plans:` block replaced the first.
 * Such keys are now errors with their path, at any depth, block or flow style, and valid YAML is
 * never refused (checked on every config the repo ships and on generated documents).
 * Audit finding 9 (YAML part): a syntax error says near which line.
 */
import { describe, expect, test } from 'bun:test'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { duplicateKeys } from '../../src/config/duplicate-keys.ts'
import { quotePlaceholders } from '../../src/config/yaml.ts'
import { REPO } from '../support/cli.ts'
import { testConfigDoc } from '../support/config-doc.ts'
import { doc, docPaths } from '../support/docs.ts'
import { DEMO_ONLY, textProblems } from './problems.ts'

const dups = (text: string) => duplicateKeys(text, Bun.YAML.parse(text)).map((p) => p.path)

describe('duplicate keys', () => {
  test('the audit file: a second server: and plans: block are errors naming both lines', async () => {
    const found = await textProblems(`server: { host: 127.0.0.1, port: 18110 }
${DEMO_ONLY}plans:
  free:  { rpm: 5,  rpd: 100,  models: ["tier:free"] }
default_plan: free
server: { port: 18199 }
plans:
  free: { rpm: 500, rpd: null, models: ["*"] }
`)
    expect(found).toEqual([
      { path: '/server', message: expect.stringContaining("duplicate key 'server' (lines 1 and 10)") },
      { path: '/plans', message: expect.stringContaining("duplicate key 'plans' (lines 7 and 11)") },
    ])
  })

  test.each([
    ['nested block', 'a:\n  b: 1\n  c: 2\n  b: 3\n', ['/a/b']],
    ['flow', 'a: { x: 1, y: [1, 2], x: 3 }\n', ['/a/x']],
    ['flow over lines', 'm:\n  - { name: echo, context_window: 8192,\n      name: x }\n', ['/m/0/name']],
    ['JSON', '{\n  "a": 1,\n  "b": {"c": 1, "c": 2},\n  "a": 2\n}\n', ['/a', '/b/c']],
    ['in a sequence', 'p:\n  - prefix: a\n    kind: demo\n    prefix: b\n  - prefix: c\n', ['/p/0/prefix']],
    ['sequence under its key', 'p:\n- prefix: a\n  prefix: b\n- prefix: c\nq: 1\n', ['/p/0/prefix']],
    ['quoted and plain', '"a": 1\na: 2\n', ['/a']],
    ['a plan name with a slash', 'plans:\n  "a/b": 1\n  "a/b": 2\n', ['/plans/a~1b']],
  ])('%s', (_, text, paths) => {
    expect(dups(text)).toEqual(paths)
  })

  test.each([
    ['block scalars', 'a: |\n  x: 1\n  x: 2\nb: >-\n  y: 1\n  y: 2\n'],
    [
      'the same key in sibling mappings',
      'a:\n  x: 1\nb:\n  x: 1\nc: [ {x: 1}, {x: 2} ]\nd:\n  - x: 1\n  - x: 2\n',
    ],
    ['nested sequences', '- x: 1\n- x: 2\n- - x: 3\n  - x: 4\n'],
    ['a merge key overriding', 'base: &b {x: 1}\nm:\n  <<: *b\n  x: 2\n'],
    ['a multi-line quoted value', 'a: "x\n  y: 1\n  y: 2"\nb: 1\n'],
    ['comments', 'a: 1 # a: 2\n# a: 3\nb: "#x"\n'],
    ['colons in values', 'u: http://x:1/a\nv: a:b\n'],
    ['a document marker', '---\na: 1\nb: 2\n'],
  ])('valid YAML is not refused: %s', (_, text) => {
    expect(dups(text)).toEqual([])
  })

  test('every config the repo ships or tests write reads with no duplicate', () => {
    const texts = [
      Bun.file(join(REPO, 'switchyard.example.yaml')),
      ...readdirSync(join(REPO, 'docs'), { recursive: true })
        .map(String)
        .filter((f) => /\.ya?ml$/.test(f))
        .map((f) => Bun.file(join(REPO, 'docs', f))),
    ]
    // The YAML blocks of every document: the README and the docs/ pages it links.
    const pages = docPaths().map((p) => doc(p))
    return Promise.all(texts.map((f) => f.text())).then((all) => {
      const blocks = [
        ...all,
        ...pages.flatMap((page) => [...page.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!)),
        JSON.stringify(testConfigDoc(), null, 2),
      ]
      let read = 0
      for (const raw of blocks) {
        const text = quotePlaceholders(raw)
        let doc: unknown
        try {
          doc = Bun.YAML.parse(text)
        } catch {
          continue // a README fragment with "…"
        }
        read++
        expect(duplicateKeys(text, doc), text.slice(0, 80)).toEqual([])
      }
      expect(read).toBeGreaterThan(3)
    })
  })

  test('generated documents, in block, flow and JSON style, read with no duplicate', () => {
    let seed = 42
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31
      return seed % n
    }
    const KEYS = [
      'a',
      'b',
      'a b',
      'x:y',
      'k#1',
      "it's",
      'q"uote',
      '-dash',
      '1',
      'true',
      'é',
      'a: b',
      '[x]',
      '{y}',
      ' sp',
      '*s',
      '&a',
      '!b',
      '%p',
      '@t',
      'null',
      '~',
    ]
    const SCALARS = [
      0,
      1.5,
      -3,
      true,
      null,
      '',
      'text',
      'a: b',
      '# no',
      'line\nbreak',
      "it's",
      '"q"',
      '- x',
      '[1]',
      '{a: 1}',
      '|',
      '>',
      '&x',
      '*y',
      ' pad ',
    ]
    const gen = (depth: number): unknown => {
      const r = rand(depth > 3 ? 2 : 4)
      if (r < 2) return SCALARS[rand(SCALARS.length)]
      if (r === 2) return Array.from({ length: rand(4) }, () => gen(depth + 1))
      const o: Record<string, unknown> = {}
      for (let i = rand(5); i > 0; i--) o[KEYS[rand(KEYS.length)]!] = gen(depth + 1)
      return o
    }
    let read = 0
    for (let n = 0; n < 300; n++) {
      const value = { root: gen(0), other: gen(1) }
      for (const text of [
        Bun.YAML.stringify(value, null, 2),
        Bun.YAML.stringify(value),
        JSON.stringify(value, null, 2),
      ]) {
        let doc: unknown
        try {
          doc = Bun.YAML.parse(text)
        } catch {
          continue
        }
        read++
        expect(duplicateKeys(text, doc), text).toEqual([])
      }
      // and a top-level key written again at the end is found whatever came before it
      const block = Bun.YAML.stringify(value, null, 2)
      expect(dups(`${block.endsWith('\n') ? block : `${block}\n`}root: 1\n`), block).toEqual(['/root'])
    }
    expect(read).toBeGreaterThan(800)
  })
})

describe('YAML syntax errors', () => {
  test.each([
    ['a bad token', 'a: 1\nb: c: d\ne: 1\n', 2],
    ['bad indentation', 'a:\n  b: 1\n   c: 2\n', 3],
    ['an unclosed bracket', 'x: 1\ny: [1,\n  2,\n  3\nz: 4\n', 2],
    ['an unclosed quote', 'a: 1\nb: "unclosed\nc: 2\n', 2],
    ['a tab for indentation', 'a:\n\tb: 1\n', 2],
  ])('%s says near which line', async (_, text, line) => {
    expect(await textProblems(text)).toEqual([
      { path: '/', message: expect.stringMatching(new RegExp(`^YAML syntax error near line ${line}: `)) },
    ])
  })
})
