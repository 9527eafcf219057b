/**
 * @module
 * The form of the address `serve` listens on (`server.host`, env `HOST`, `--host`): an IP literal
 * (IPv6 bare or in brackets) or a host name by RFC 1123 with `_` allowed — no port, no spaces.
 * Checked where the value is read, so `config check` refuses what `serve` could never listen on;
 * whether a well-formed name resolves to this machine is known only at listen (cli/serving.ts).
 *
 * @example
 * listenHostProblem('0.0.0.0')      // null
 * listenHostProblem('127.0.0.1:80') // "must be an IP address or a host name … got '127.0.0.1:80'"
 */
import { isIP } from 'node:net'

/**
 * One label: letters, digits, underscores and inner hyphens, 1 to 63 of them (RFC 1123 §2.1, and
 * `_` as Docker's service and container names have it: `proj_web_1` resolves on its network).
 */
const LABEL = /^[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?$/

/** Why `host` is not an address `serve` can listen on, or null when its form is one. */
export function listenHostProblem(host: string): string | null {
  if (isIP(host) || (host.startsWith('[') && host.endsWith(']') && isIP(host.slice(1, -1)) === 6)) return null
  const labels = host.split('.')
  // An all-digit last label is a mistyped IPv4 address (`999.1.1.1`), never a name.
  if (host.length <= 253 && labels.every((l) => LABEL.test(l)) && !/^[0-9]+$/.test(labels.at(-1)!))
    return null
  return `must be an IP address or a host name (letters, digits, '-', '_' and '.'), without a port or spaces — 127.0.0.1, 0.0.0.0, ::1, localhost — got '${host}'`
}
