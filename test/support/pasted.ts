/**
 * @module
 * Running the documents' commands as pasted, for test/e2e/docs/readme-commands.test.ts: a command
 * and its output, shell words as `sh` splits them, an environment that keeps an agent off the
 * network, a process's output line by line.
 */

/** Shell words, as sh splits them: whitespace separates, '…' and "…" quote (no escapes needed here). */
export function shellWords(line: string): string[] {
  const words: string[] = []
  let word: string | null = null
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!
    if (c === "'" || c === '"') {
      const end = line.indexOf(c, i + 1)
      word = (word ?? '') + line.slice(i + 1, end)
      i = end
    } else if (/\s/.test(c)) {
      if (word !== null) words.push(word)
      word = null
    } else word = (word ?? '') + c
  }
  if (word !== null) words.push(word)
  return words
}

/** Every non-loopback connection goes to a closed local port. */
export const ISOLATED = {
  PATH: '/usr/local/bin:/usr/bin:/bin',
  HTTPS_PROXY: 'http://127.0.0.1:9',
  HTTP_PROXY: 'http://127.0.0.1:9',
  ALL_PROXY: 'http://127.0.0.1:9',
  https_proxy: 'http://127.0.0.1:9',
  http_proxy: 'http://127.0.0.1:9',
  all_proxy: 'http://127.0.0.1:9',
  NO_PROXY: '127.0.0.1,localhost',
  no_proxy: '127.0.0.1,localhost',
  DISABLE_AUTOUPDATER: '1',
  DISABLE_TELEMETRY: '1',
  DISABLE_ERROR_REPORTING: '1',
}

export interface RunResult {
  code: number
  stdout: string
  stderr: string
}

/**
 * A command with its own environment; its output, and its exit code (printed with the output when
 * not 0). Killed after 150 s: a coding agent's turn shares a loaded 2-core host with the rest of
 * its file's runs; the bound fails only a stuck run.
 */
export async function run(cmd: string[], env: Record<string, string>, cwd: string): Promise<RunResult> {
  const proc = Bun.spawn(cmd, { cwd, env, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe', timeout: 150_000 })
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ])
  if (code !== 0) console.log(`${cmd[0]} exited ${code}\n${stdout}\n${stderr}`)
  return { code, stdout, stderr }
}

/** A process's output, line by line. */
export async function* outputLines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder()
  let text = ''
  for await (const chunk of stream) {
    text += decoder.decode(chunk, { stream: true })
    let nl = text.indexOf('\n')
    while (nl >= 0) {
      yield text.slice(0, nl)
      text = text.slice(nl + 1)
      nl = text.indexOf('\n')
    }
  }
}
