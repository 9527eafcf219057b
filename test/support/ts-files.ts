/**
 * @module
 * The TypeScript files under a folder, for the tests that read the source as text (the import
 * DAG, bound SQL, the test hooks): `.ts` and `.tsx`, not declarations, never inside `node_modules`.
 */
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

export function tsFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules') continue
    const path = join(dir, name)
    if (statSync(path).isDirectory()) tsFiles(path, out)
    else if (/\.tsx?$/.test(name) && !name.endsWith('.d.ts')) out.push(path)
  }
  return out
}
