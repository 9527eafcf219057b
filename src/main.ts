#!/usr/bin/env bun
/**
 * @module
 * Command-line entry: parses argv and dispatches to a command in `cli/`.
 */
import { accountsCommand } from './cli/accounts.ts'
import { parseArgs, UsageError } from './cli/args.ts'
import { type Io, processIo } from './cli/context.ts'
import { configCommand, modelsCommand, usageCommand } from './cli/info.ts'
import { keysCommand } from './cli/keys.ts'
import { migrateCommand } from './cli/migrate.ts'
import { serveCommand } from './cli/serve.ts'
import { ConfigError } from './config/index.ts'
import { GatewayError } from './util/errors.ts'

export const HELP = `switchyard — self-hosted OpenAI-compatible LLM gateway

Usage: switchyard <command> [options]

Commands:
  serve [--host H] [--port P] [--workers N]   run the gateway (default 127.0.0.1:8080)
  accounts create NAME --plan PLAN [--days N]  new account
  accounts list | accounts show NAME
  accounts set-plan NAME PLAN [--days N]       upgrade, downgrade or renew
  accounts disable NAME | accounts enable NAME
  keys create ACCOUNT [--name LABEL]           prints the new key once
  keys list [ACCOUNT]
  keys disable ID | keys enable ID | keys revoke ID | keys rotate ID | keys unsuspend ID
  usage ACCOUNT                                what GET /v1/usage reports for the account
  models                                       the model catalogue with features
  config check                                 validate the config
  migrate                                      apply the schema to the configured database

Options (every command):
  --config FILE   config file (default ./switchyard.yaml, env SWITCHYARD_CONFIG)
  --db PATH|URL   SQLite path or postgres:// URL, overrides the config (env SWITCHYARD_DB)
  --json          print exactly one JSON document on stdout
  --help          this text
`

const BOOLEAN_FLAGS = new Set(['json', 'help', 'worker-child'])

export async function run(argv: string[], io: Io = processIo): Promise<number> {
  let json = false
  try {
    const p = parseArgs(argv, BOOLEAN_FLAGS)
    json = p.flags.json === true
    const cmd = p.positionals[0]
    if (p.flags.help || cmd === 'help' || cmd === undefined) {
      io.out(HELP)
      return cmd === undefined && !p.flags.help ? 2 : 0
    }
    switch (cmd) {
      case 'serve':
        return await serveCommand(p, io)
      case 'accounts':
        return await accountsCommand(p, io)
      case 'keys':
        return await keysCommand(p, io)
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
  process.exitCode = await run(process.argv.slice(2))
}
