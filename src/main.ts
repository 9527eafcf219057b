#!/usr/bin/env bun
/**
 * @module
 * Command-line entry: parses argv and dispatches to a command in `cli/`.
 */
import { checkFlags, type Parsed, parseArgs, UsageError } from './cli/args.ts'
import { CliError } from './cli/errors.ts'
import { COMMAND_HELP, HELP } from './cli/help.ts'
import { type Io, processIo } from './cli/io.ts'
import { exitOnBrokenOutput } from './cli/process.ts'
import { quoted } from './cli/text.ts'
import { ConfigError } from './config/error.ts'
import { GatewayError } from './util/errors.ts'
import { VERSION } from './version.ts'

export { HELP }

const BOOLEAN_FLAGS = new Set(['json', 'help', 'version', 'worker-child'])
type Command = (p: Parsed, io: Io) => Promise<number>
/**
 * Every command, by its first word, loaded when it runs: a command's modules (the server, the
 * schemas, the stores) are evaluated only by the command that needs them, so `--version`,
 * `help` or `accounts list` do not pay for `serve`'s (docs/decisions.md, "Commands load lazily").
 */
const COMMANDS = {
  init: async () => (await import('./cli/init.ts')).initCommand,
  serve: async () => (await import('./cli/serve.ts')).serveCommand,
  reload: async () => (await import('./cli/reload.ts')).reloadCommand,
  accounts: async () => (await import('./cli/accounts.ts')).accountsCommand,
  keys: async () => (await import('./cli/keys.ts')).keysCommand,
  sessions: async () => (await import('./cli/sessions.ts')).sessionsCommand,
  usage: async () => (await import('./cli/info.ts')).usageCommand,
  models: async () => (await import('./cli/info.ts')).modelsCommand,
  config: async () => (await import('./cli/info.ts')).configCommand,
  migrate: async () => (await import('./cli/migrate.ts')).migrateCommand,
  alerts: async () => (await import('./cli/alerts.ts')).alertsCommand,
} satisfies Record<string, () => Promise<Command>>

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
    // `help X` is `X --help`.
    const topic = cmd === 'help' ? p.positionals[1] : p.flags.help ? cmd : undefined
    if (topic !== undefined && !Object.hasOwn(COMMANDS, topic)) {
      throw new UsageError(`unknown command ${quoted(topic)}; run switchyard --help`)
    }
    // Help is a document like any other: with --json, `{"usage": TEXT}`.
    const help = (text: string) => io.out(json ? JSON.stringify({ usage: text }) : text)
    if (cmd === 'help') {
      help(COMMAND_HELP[topic ?? ''] ?? HELP)
      return 0
    }
    // A short flag where the command should be (`-p 80 serve`): the flag is the mistake, not '80'.
    if (p.shortFlags.length && !p.flags.help && !(cmd && Object.hasOwn(COMMANDS, cmd))) checkFlags(p, [])
    if (p.flags.help || cmd === undefined) {
      const text = (cmd && COMMAND_HELP[cmd]) || HELP
      if (p.flags.help) {
        help(text)
        return 0
      }
      // No command is a usage error: its help goes where errors go (with --json, the error line).
      if (json) throw new UsageError('no command given; run switchyard --help for the commands')
      io.err(text)
      return 2
    }
    const load = Object.hasOwn(COMMANDS, cmd) ? COMMANDS[cmd as keyof typeof COMMANDS] : undefined
    if (!load) throw new UsageError(`unknown command ${quoted(cmd)}; run switchyard --help`)
    const command = await load()
    return await command(p, io)
  } catch (err) {
    return report(err, io, json)
  }
}

function report(err: unknown, io: Io, json: boolean): number {
  const code = err instanceof UsageError ? 2 : 1
  // With --json every error is one JSON line on stderr, in the API's error shape, whatever failed.
  if (json) io.err(JSON.stringify(errorBody(err)))
  else if (err instanceof ConfigError) io.err(err.message)
  else io.err(`error: ${(err as Error)?.message ?? String(err)}`)
  return code
}

/** `{error: {message, type, param, code}}`; a config error adds its `problems`. */
function errorBody(err: unknown): { error: Record<string, unknown> } {
  if (err instanceof GatewayError) return err.toBody()
  const message = (err as Error)?.message ?? String(err)
  if (err instanceof ConfigError) {
    return {
      error: { message, type: 'invalid_config', param: null, code: 'invalid_config', problems: err.problems },
    }
  }
  if (err instanceof UsageError)
    return { error: { message, type: 'usage_error', param: null, code: 'usage_error' } }
  if (err instanceof CliError) return { error: { message, type: err.code, param: null, code: err.code } }
  // Every failure a command foresees is one of the above: anything else is a fault of its own.
  return { error: { message, type: 'internal_error', param: null, code: 'internal_error' } }
}

if (import.meta.main) {
  exitOnBrokenOutput()
  const code = await run(process.argv.slice(2))
  // A failed `serve` may leave handles open (a worker, the parent-watch on stdin): exit now, so a
  // supervisor such as systemd sees the failure instead of a process listening on nothing.
  if (code !== 0) process.exit(code)
  process.exitCode = code
}
