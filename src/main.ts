#!/usr/bin/env bun
/**
 * @module
 * Command-line entry: parses argv and dispatches to a command in `cli/`.
 */
import { accountsCommand } from './cli/accounts.ts'
import { parseArgs, UsageError } from './cli/args.ts'
import { type Io, processIo } from './cli/context.ts'
import { COMMAND_HELP, HELP } from './cli/help.ts'
import { configCommand, modelsCommand, usageCommand } from './cli/info.ts'
import { initCommand } from './cli/init.ts'
import { keysCommand } from './cli/keys.ts'
import { migrateCommand } from './cli/migrate.ts'
import { serveCommand } from './cli/serve.ts'
import { sessionsCommand } from './cli/sessions.ts'
import { ConfigError } from './config/index.ts'
import { GatewayError } from './util/errors.ts'
import { VERSION } from './version.ts'

export { HELP }

const BOOLEAN_FLAGS = new Set(['json', 'help', 'version', 'worker-child'])

export async function run(argv: string[], io: Io = processIo): Promise<number> {
  let json = false
  try {
    const p = parseArgs(argv, BOOLEAN_FLAGS)
    json = p.flags.json === true
    const cmd = p.positionals[0]
    if (p.flags.version || cmd === 'version') {
      io.out(json ? JSON.stringify({ version: VERSION }) : `switchyard ${VERSION}`)
      return 0
    }
    if (cmd === 'help') {
      io.out(COMMAND_HELP[p.positionals[1] ?? ''] ?? HELP)
      return 0
    }
    if (p.flags.help || cmd === undefined) {
      io.out((cmd && COMMAND_HELP[cmd]) || HELP)
      return cmd === undefined && !p.flags.help ? 2 : 0
    }
    switch (cmd) {
      case 'init':
        return await initCommand(p, io)
      case 'serve':
        return await serveCommand(p, io)
      case 'accounts':
        return await accountsCommand(p, io)
      case 'keys':
        return await keysCommand(p, io)
      case 'sessions':
        return await sessionsCommand(p, io)
      case 'usage':
        return await usageCommand(p, io)
      case 'models':
        return await modelsCommand(p, io)
      case 'config':
        return await configCommand(p, io)
      case 'migrate':
        return await migrateCommand(p, io)
      default:
        throw new UsageError(`unknown command '${cmd}'; run switchyard --help`)
    }
  } catch (err) {
    return report(err, io, json)
  }
}

function report(err: unknown, io: Io, json: boolean): number {
  if (err instanceof UsageError) {
    io.err(`error: ${err.message}`)
    return 2
  }
  if (err instanceof ConfigError) {
    io.err(err.message)
    return 1
  }
  if (err instanceof GatewayError) {
    io.err(json ? JSON.stringify(err.toBody()) : `error: ${err.message}`)
    return 1
  }
  io.err(`error: ${(err as Error)?.message ?? String(err)}`)
  return 1
}

if (import.meta.main) {
  const code = await run(process.argv.slice(2))
  // A failed `serve` may leave handles open (a worker, the parent-watch on stdin): exit now, so a
  // supervisor such as systemd sees the failure instead of a process listening on nothing.
  if (code !== 0) process.exit(code)
  process.exitCode = code
}
