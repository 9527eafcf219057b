/**
 * @module
 * Work started now and awaited later by the test that checks it, so that a file's independent
 * slow parts (processes that mostly wait on their own start-up, a browser page waiting for the
 * console's next live reading) overlap rather than run one test after another.
 */

/**
 * `work`, started now. A failure is the awaiting test's, never an unhandled rejection before it.
 */
export function started<T>(work: () => Promise<T>): Promise<T> {
  const p = work()
  p.catch(() => {})
  return p
}
