/**
 * @module
 * Where a command writes and what environment it reads: the process's own, or a test's.
 */

export interface Io {
  out(text: string): void
  err(text: string): void
  env: Record<string, string | undefined>
}

export const processIo: Io = {
  out: (t) => process.stdout.write(t.endsWith('\n') ? t : `${t}\n`),
  err: (t) => process.stderr.write(t.endsWith('\n') ? t : `${t}\n`),
  env: process.env,
}
