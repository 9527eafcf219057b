/**
 * Issue 22 finding 5: a graceful stop prints nothing but its two log lines. Elysia's `app.stop`
 * was called twice (once to let finished responses leave, once to close), and the second call
 * printed "Elysia isn't running" with a stack trace on stdout at every stop.
 */
import { expect, test } from 'bun:test'
import { tempDir, testConfigDoc } from '../support/config-doc.ts'
import { spawnServe, UNSUPERVISED, writeConfig } from '../support/process.ts'

test.each(['SIGTERM', 'SIGINT'] as const)(
  '%s: exit 0, no stack trace, stdout quiet',
  async (signal) => {
    const config = writeConfig(tempDir(), testConfigDoc())
    const serve = await spawnServe(['--port', '0', '--config', config])
    // Serving (the handlers are in before the start line: the test below).
    expect((await fetch(`${serve.url}/healthz`)).status).toBe(200)
    expect(await serve.kill(signal)).toBe(0)
    const stdout = await rest(serve.proc.stdout as ReadableStream<Uint8Array>)
    const stderr = await new Response(serve.proc.stderr as ReadableStream).text()
    expect(stdout).toBe('')
    expect(stderr).not.toContain('Error')
    expect(stderr).not.toMatch(/^\s+at /m)
    expect(stderr).toContain('"msg":"stopped"')
  },
  30_000,
)

// A signal right after the start line: the handlers are in before the line is printed, so the
// stop is graceful — drained, exit 0, its log lines written. The process died of the signal
// itself (no "stopped" line, exit ≠ 0) in about half of these runs on a loaded machine, and log
// lines still waiting to be written died with it. The serving process runs without its supervisor
// (UNSUPERVISED): the signal reaches it the moment its line is read, as directly as it can, and
// each of the six starts is one process, not two (the two tests above keep the supervisor).
test('SIGTERM at once after the start line: a graceful stop every time', async () => {
  for (let i = 0; i < 6; i++) {
    const config = writeConfig(tempDir(), testConfigDoc())
    const serve = await spawnServe(['--port', '0', '--config', config], { env: UNSUPERVISED })
    const code = await serve.kill('SIGTERM')
    const stderr = await new Response(serve.proc.stderr as ReadableStream).text()
    expect({ i, code, stopped: stderr.includes('"msg":"stopped"') }).toEqual({ i, code: 0, stopped: true })
  }
}, 60_000)

/** What is left on a stream its first reader already read from. */
async function rest(stream: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stream.getReader()
  let text = ''
  for (;;) {
    const { value, done } = await reader.read()
    if (done) return text
    text += new TextDecoder().decode(value)
  }
}
