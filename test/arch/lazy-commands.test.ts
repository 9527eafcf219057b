/**
 * The CLI loads each command when it runs (src/main.ts imports them with `import()`), and `serve`'s
 * supervisor process never loads the serving half (src/cli/serving.ts): `--version` costs ~0.1
 * CPU-s, not the whole server's ~0.35 (docs/decisions.md, "Commands load lazily"). A static import
 * would bring that cost back without failing anything else, so the modules a start evaluates are
 * checked here: the files reached from an entry by static value imports (`import type` and
 * `import()` excluded), read from the source text.
 */
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { tsFiles } from '../support/ts-files.ts'

const SRC = resolve(import.meta.dir, '../../src')
/** A static import or re-export that is not type-only: `import … from '…'`, `import '…'`, `export … from '…'`. */
const STATIC =
  /(?:^|\n)\s*(?:import(?!\s+type\s)(?:\s[^'";]*?\bfrom)?|export(?!\s+type\s)\s[^'";]*?\bfrom)\s*['"](\.[^'"]+)['"]/g

function staticReach(entry: string): Set<string> {
  const known = new Set(tsFiles(SRC))
  const seen = new Set<string>()
  const visit = (file: string) => {
    if (seen.has(file)) return
    seen.add(file)
    for (const m of readFileSync(file, 'utf8').matchAll(STATIC)) {
      const base = resolve(dirname(file), m[1]!)
      const hit = [base, `${base}.ts`, `${base}.tsx`, join(base, 'index.ts')].find((p) => known.has(p))
      if (hit) visit(hit)
    }
  }
  visit(join(SRC, entry))
  return new Set([...seen].map((f) => relative(SRC, f)))
}

const under = (files: Set<string>, prefixes: string[]) =>
  [...files].filter((f) => prefixes.some((p) => f === p || f.startsWith(p))).sort()

describe('what a start evaluates', () => {
  test('src/main.ts reaches no command, server, store or config schema statically', () => {
    const reached = staticReach('main.ts')
    expect(reached.has('cli/args.ts')).toBe(true)
    expect(
      under(reached, [
        'app/',
        'server/',
        'console/',
        'store/',
        'pipeline/',
        'config/schema.ts',
        'cli/serve.ts',
        'cli/serving.ts',
        'cli/accounts.ts',
        'cli/keys.ts',
      ]),
    ).toEqual([])
  })

  test("src/cli/serve.ts (the supervisor's) reaches neither the serving half, the server nor the stores statically", () => {
    // The supervisor reads the config and starts the command again; the stores and the accounts
    // service (cli/context.ts imports them in withAccounts) were ~50 ms of its CPU (stop 62).
    const reached = staticReach('cli/serve.ts')
    expect(reached.has('config/schema.ts')).toBe(true)
    expect(
      under(reached, [
        'cli/serving.ts',
        'cli/database.ts',
        'app/',
        'server/',
        'pipeline/',
        'console/',
        'store/',
        'accounts/',
      ]),
    ).toEqual([])
  })

  test("the serving process reaches PostgreSQL's and Redis's modules only through openStores' import()", () => {
    // A SQLite gateway (the default, and most of the suite's) evaluated both at every start:
    // ~30 ms of a serving process's CPU (stop 62). Their errors and redactUrl stay static (small).
    const reached = staticReach('cli/serving.ts')
    expect(reached.has('store/open.ts')).toBe(true)
    expect(
      under(reached, ['store/postgres/', 'store/redis/']).filter((f) => f !== 'store/postgres/errors.ts'),
    ).toEqual([])
  })

  test("TypeBox's compiler is called by compiledOnUse only", () => {
    // Nine compiles at load were ~0.1 s of CPU at every `serve` start (docs/decisions.md, "Request
    // schemas compile at first use"); a surface compiles its schema at its first request instead.
    const compiling = tsFiles(SRC)
      .filter((f) => /TypeCompiler\.Compile\(/.test(readFileSync(f, 'utf8')))
      .map((f) => relative(SRC, f))
    expect(compiling).toEqual(['json/validation-error.ts'])
  })

  test('no module compiles a schema when it loads: every src module evaluated, TypeBox compiles nothing', async () => {
    // The text above misses a compile at load through compiledOnUse itself (a module-level
    // `compiledOnUse(S)()`, or its check called at the top level): so every module is evaluated,
    // in a process of its own (here, modules other test files loaded are evaluated already), with
    // the compiler counting its calls. Left out: the CLI's entry (it runs a command), the browser's
    // console pages, the usage writer's thread entry (a worker's).
    const modules = tsFiles(SRC).filter(
      (f) =>
        f.endsWith('.ts') &&
        !f.includes('/console/ui/') &&
        !['main.ts', 'store/sqlite/usage-thread.ts'].includes(relative(SRC, f)),
    )
    const script = `
      import { TypeCompiler } from '@sinclair/typebox/compiler'
      const at = []
      const compile = TypeCompiler.Compile
      TypeCompiler.Compile = (...args) => (at.push(new Error().stack.split('\\n').slice(2, 6).join(' < ')), compile(...args))
      for (const f of ${JSON.stringify(modules)}) await import(f)
      console.log(JSON.stringify(at))
      process.exit(0)
    `
    const proc = Bun.spawn([process.execPath, '-e', script], {
      cwd: resolve(SRC, '..'),
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const [out, err, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ])
    expect({ code, err: code === 0 ? '' : err }).toEqual({ code: 0, err: '' })
    expect(modules.length).toBeGreaterThan(300)
    expect(JSON.parse(out)).toEqual([])
  })
})
