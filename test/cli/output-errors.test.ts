/**
 * Output that cannot be written: `switchyard models --json | reader-that-quit` died with Bun's
 * EPIPE stack trace, and `> /dev/full` (a full disk) with an ENOSPC one. A reader that went away
 * ends the command quietly, as coreutils do (exit 141, SIGPIPE's); a failed write says so in one
 * line, exit 1.
 */
import { expect, test } from 'bun:test'
import { join } from 'node:path'
import { BUN, REPO } from '../support/cli.ts'
import { tempDir, testConfigDoc } from '../support/config-doc.ts'
import { writeConfig } from '../support/process.ts'

const config = writeConfig(tempDir(), testConfigDoc())
const main = join(REPO, 'src/main.ts')

async function sh(script: string): Promise<{ stdout: string; stderr: string }> {
  const proc = Bun.spawn(['bash', '-c', script], { stdout: 'pipe', stderr: 'pipe', timeout: 20_000 })
  const [stdout, stderr] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
  ])
  await proc.exited
  return { stdout, stderr }
}

test('a reader that closed the pipe: exit 141, no stack trace', async () => {
  // The reader closes its end at once, so the command's first write meets a broken pipe.
  const err = join(tempDir(), 'stderr')
  const r = await sh(
    `'${BUN}' '${main}' models --json --config '${config}' 2>'${err}' | (exec 0<&-; sleep 2); echo "code=\${PIPESTATUS[0]}"`,
  )
  expect(r.stdout.trim()).toBe('code=141')
  expect(await Bun.file(err).text()).toBe('')
})

test('a full disk: one line naming the failure, exit 1', async () => {
  const r = await sh(`'${BUN}' '${main}' models --json --config '${config}' > /dev/full; echo "code=$?"`)
  expect(r.stdout.trim()).toBe('code=1')
  expect(r.stderr).toContain('error: cannot write the output')
  expect(r.stderr).toContain('ENOSPC')
  expect(r.stderr).not.toMatch(/^\s+at /m)
})
