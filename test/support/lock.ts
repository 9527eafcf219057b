/** Holds a database's write lock from another process (see lock-holder.ts). */
import { join } from 'node:path'
import { BUN, REPO } from './cli.ts'

export interface HeldLock {
  /** Resolves when the holder has committed and exited. */
  released: Promise<number>
  /** Commits now rather than at the end of the hold; resolves as `released` does. */
  release(): Promise<number>
}

export async function holdWriteLock(dbPath: string, holdMs: number): Promise<HeldLock> {
  const proc = Bun.spawn([BUN, join(REPO, 'test/support/lock-holder.ts'), dbPath, String(holdMs)], {
    stdout: 'pipe',
    stderr: 'inherit',
  })
  const reader = proc.stdout.getReader()
  let text = ''
  while (!text.includes('locked')) {
    const { value, done } = await reader.read()
    if (done) throw new Error('lock holder exited before taking the lock')
    text += new TextDecoder().decode(value)
  }
  reader.releaseLock()
  return {
    released: proc.exited,
    release() {
      proc.kill('SIGUSR2')
      return proc.exited
    },
  }
}
