/**
 * Every file of a `bun test` run has the suite's limit (test/setup.ts), not only the first: Bun
 * 1.4.4 put the later files back to `--timeout`'s (5 s without it), and a test past it is failed
 * and its processes SIGTERMed — gateways that "exited" when several tokens-processes files ran in
 * one command (2026-11-30). Here a run of two files under `--timeout 25`, each file a test of
 * 150 ms: without the preload's per-file limit the second file's test fails at 25 ms.
 */
import { expect, test } from 'bun:test'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { BUN } from './cli.ts'
import { tempDir } from './config-doc.ts'

const REPO = new URL('../..', import.meta.url).pathname

test('the second file of a run has the suite timeout, as the first does', async () => {
  const dir = tempDir('switchyard-timeout-')
  try {
    const files = ['first', 'second'].map((name) => {
      const path = join(dir, `${name}.test.ts`)
      writeFileSync(path, `import { test } from 'bun:test'\ntest('${name}', () => Bun.sleep(150))\n`)
      return path
    })
    // From the checkout, so that its bunfig.toml preloads test/setup.ts.
    const run = Bun.spawn([BUN, 'test', '--timeout', '25', ...files], {
      cwd: REPO,
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const [out, err, code] = await Promise.all([
      new Response(run.stdout).text(),
      new Response(run.stderr).text(),
      run.exited,
    ])
    // Bun writes its report to stderr.
    const report = out + err
    expect(report).not.toContain('timed out')
    expect(report).toContain('2 pass')
    expect(code).toBe(0)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
