/**
 * @module
 * Help texts: the global summary and one page per command with that command's own flags.
 */
import { limitFlagsHelp } from './key-limit-flags.ts'

const GLOBAL_OPTIONS = `Options (every command):
  --config FILE   config file (default ./switchyard.yaml, env SWITCHYARD_CONFIG)
  --db PATH|URL   SQLite path or postgres:// URL, overrides the config (env SWITCHYARD_DB)
  --json          print exactly one JSON document on stdout
  --help, -h      help for the command
Flags are long ones: a flag or an argument the command does not take is an error.`

export const HELP = `switchyard — self-hosted OpenAI-compatible LLM gateway

Usage: switchyard <command> [options]

Commands:
  init [--config FILE] [--db PATH|URL]        write a commented starter config
  serve [--host H] [--port P] [--workers N]   run the gateway (default 127.0.0.1:8080)
  reload                                      the running gateway re-reads its config file
  accounts create NAME [--plan PLAN] [...]    new account (plan: default_plan unless given)
  accounts list | accounts show NAME
  accounts set-plan NAME PLAN [...]           upgrade, downgrade or renew (see accounts --help)
  accounts disable NAME | accounts enable NAME
  keys create ACCOUNT [--name LABEL] [...]     prints the new key once
  keys set-limits ID [--tpm N] [...]           the key's own limits (see keys --help)
  keys list [ACCOUNT]
  keys disable ID | keys enable ID | keys revoke ID | keys rotate ID | keys unsuspend ID
  sessions list                                the console's live sessions
  sessions revoke ID | --key KEY_ID | --kind admin|key   end one, a key's, or a kind's
  usage ACCOUNT                                what GET /v1/usage reports for the account
  models                                       the model catalogue with features
  config check                                 validate the config
  migrate                                      apply the schema to the configured database
  alerts test                                  send a test event to every configured webhook

Run 'switchyard <command> --help' for a command's flags; 'switchyard --version' for the version.

${GLOBAL_OPTIONS}
`

const page = (usage: string, body: string) => `Usage: ${usage}\n\n${body}\n\n${GLOBAL_OPTIONS}\n`

export const COMMAND_HELP: Record<string, string> = {
  init: page(
    'switchyard init [--config FILE] [--db PATH|URL]',
    `Writes a commented starter config (the offline demo provider; plans free, basic, pro and dev)
where the other commands look for it. Refuses to overwrite an existing file.

  --config FILE   where to write it (env SWITCHYARD_CONFIG; default ./switchyard.yaml);
                  --path FILE is the same
  --db PATH|URL   the database the config names: a SQLite path (written absolute) or a
                  postgres:// URL (database.url). SWITCHYARD_DB is not written: it overrides
                  the file whenever it is set`,
  ),
  reload: page(
    'switchyard reload',
    `Has the running gateway re-read its config file, without a restart: requests admitted after
it use the new plans, limits, prices, providers, key pools and models; those in flight finish on
the config they started with; with --workers N every process takes it. Asks through
POST /admin/v1/reload where the running serve listens, with the credential it wrote in its serve
file (beside the database: <database.path>.<pid>.serving, mode 0600; several serve processes on
one database are each asked), so a new admin.token or port in the file is the gateway's to judge. A file with problems is refused with every one of them, and so
is a change to a setting read only at start (listen address, database, workers ...): the gateway
keeps its config. Prints what changed. Without the serve file: send serve SIGHUP (kill -HUP PID).`,
  ),
  serve: page(
    'switchyard serve [--host H] [--port P] [--workers N]',
    `Runs the gateway until SIGTERM or SIGINT, then drains in-flight requests for up to
server.drain_timeout_s, retries the last usage flush for up to as long again while the
database is busy or away, and exits 0. A second SIGTERM or SIGINT during the drain stops at
once, cutting what is in flight (exit 143 or 130). Exits non-zero if it cannot start (port
taken, bad config).

  --host H        address to listen on (env HOST; default 127.0.0.1)
  --port P        port to listen on, 0 = any free port (env PORT; default 8080)
  --workers N     processes sharing the port (default server.workers, 1)`,
  ),
  accounts: page(
    'switchyard accounts <create|list|show|set-plan|disable|enable> ...',
    `  accounts create NAME [--plan PLAN] [--days N | --expires-at TIME]
  accounts list
  accounts show NAME                  the account and its plan history
  accounts set-plan NAME PLAN [--days N | --expires-at TIME]
  accounts disable NAME | accounts enable NAME

  --plan PLAN         plan name (default: default_plan)
  --days N            how long the plan lasts from now; 0 = it expires now (to try expiry)
  --expires-at TIME   when the plan ends, ISO-8601 (e.g. 2030-01-31 or 2030-01-31T00:00:00Z)`,
  ),
  keys: page(
    'switchyard keys <create|list|set-limits|disable|enable|revoke|rotate|unsuspend> ...',
    `  keys create ACCOUNT [--name LABEL] [limits]
                                      prints the new key once; only its hash is stored
  keys set-limits ID [limits]         change the key's own limits (flags left out are kept)
  keys list [ACCOUNT]                 id, label, prefix, state, created, last used, limits
  keys disable ID | keys enable ID
  keys revoke ID                      permanent
  keys rotate ID                      new secret, same id and counters
  keys unsuspend ID                   lift a suspension (after repeated refused requests)

  --name LABEL    a label for the key (keys create): at most 200 characters, no control characters

Limits of the key itself (keys create, keys set-limits), within its account's plan: a value
above the plan's is refused. 'none' clears one (the plan's alone applies).
${limitFlagsHelp()}

Example: switchyard keys create acme --name ci --tpm 20000 --budget-usd 5 --budget-period day`,
  ),
  sessions: page(
    'switchyard sessions <list|revoke> ...',
    `  sessions list                       the console's live sessions: id, kind, key, created, expires
  sessions revoke ID                  end one session (its id from the list)
  sessions revoke --key KEY_ID        end every key-holder session of a key
  sessions revoke --kind admin|key    end every operator (admin) or key-holder session

A session also ends by itself when its credential changes: a new admin token (at restart), or
its key rotated, disabled or revoked.`,
  ),
  usage: page('switchyard usage ACCOUNT', 'What GET /v1/usage reports for the account.'),
  models: page('switchyard models', 'The model catalogue with each model’s features.'),
  alerts: page(
    'switchyard alerts test',
    `  alerts test    sends one signed alert.test event to every webhook in alerts.webhooks now
                 (not through the queue: no server needs to run) and prints each answer;
                 exits 1 when any did not answer 2xx.`,
  ),
  migrate: page(
    'switchyard migrate',
    'Applies the schema to the configured database (SQLite file or PostgreSQL); serve refuses a schema it does not know.',
  ),
  config: page(
    'switchyard config check',
    'Validates the config (secrets included) and exits 0, or prints every problem with its path.',
  ),
}
