/**
 * @module
 * The bench probes' one way to read a flag's value from the command line.
 */

/** The word after `name` on the command line (`--rounds 9` → "9"), or undefined when absent. */
export function option(name: string): string | undefined {
  const i = process.argv.indexOf(name)
  return i === -1 ? undefined : process.argv[i + 1]
}
