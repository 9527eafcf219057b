/**
 * @module
 * The one list of limit settings (DESIGN §11): every limit a plan or a key sets, with what each
 * place that names limits needs from it. The config's plan schema (schema.ts), the command line's
 * flags, help and text (cli/key-limit-flags.ts), the admin API's key limits and their checks
 * (accounts/key-limits.ts), the store's key limits (store/key-limits.ts), the console's key form
 * and plans table, `/v1/usage` (`rate_limits`) and the rows admission checks (limits/rows.ts) all
 * read it: a new limit is one entry here (plus its `api_keys` column and migration when keys may
 * set it). test/config/limit-settings.test.ts holds every one of those places to this list.
 *
 * Pure data with no imports: the console's browser bundle reads it too. It lives in `config/`, the
 * lowest folder that names limits (limits/ and everything above read config/).
 *
 * @example
 * KEY_COUNTS.map((s) => s.name) // → ['rpm', 'rpd', 'tpm', 'tpd']
 * cliFlags(LIMIT_SETTINGS[5]!)  // → ['budget-usd', 'budget-period']
 */

/** What a row counts: admitted requests, tokens (input + output), cost in micro-dollars. */
export type LimitResource = 'requests' | 'tokens' | 'microdollars'

/** Budget periods: calendar day, ISO week (from Monday) or month, all in UTC. */
export const BUDGET_PERIODS = ['day', 'week', 'month'] as const
export type CalendarPeriod = (typeof BUDGET_PERIODS)[number]

interface Common {
  /** The field's name in a plan, the admin API's key limits and `/v1/usage`. */
  name: string
  /**
   * In a plan of the config: `required` must be written (null for none: a typo must not silently
   * lift a limit), `optional` may be left out (none).
   */
  plan: 'required' | 'optional'
  /** A key may set its own, within its account's plan (CLI flags, admin API, console). */
  key: boolean
  /** The plans table's column head, lower case (`requests / min`); capitalised, the key form's label. */
  label: string
}

/** A whole number of at least 1, or null for none. */
export interface CountSetting extends Common {
  kind: 'count'
  /** The command line's help for `--NAME N`. */
  help: string
  /**
   * The sliding-window row it makes (limits/rows.ts), checked and charged at admission; null for a
   * cap checked on the request alone (`max_context_tokens`).
   */
  row: { resource: 'requests' | 'tokens'; window: 'minute' | 'day' } | null
}

/** `{ usd, period }`: money per calendar period; the money row (microdollars × period). */
export interface BudgetSetting extends Common {
  kind: 'budget'
}

/** Model ids a request may name (a plan also takes `prefix/*`, `tier:NAME`, `*`); no row. */
export interface ModelsSetting extends Common {
  kind: 'models'
}

export type LimitSetting = CountSetting | BudgetSetting | ModelsSetting

/** In the order every surface lists them (the config schema's, the CLI's, the console's). */
export const LIMIT_SETTINGS = [
  {
    name: 'rpm',
    kind: 'count',
    plan: 'required',
    key: true,
    label: 'requests / min',
    help: 'requests per minute',
    row: { resource: 'requests', window: 'minute' },
  },
  {
    name: 'rpd',
    kind: 'count',
    plan: 'required',
    key: true,
    label: 'requests / day',
    help: 'requests per day (24 h)',
    row: { resource: 'requests', window: 'day' },
  },
  {
    name: 'tpm',
    kind: 'count',
    plan: 'optional',
    key: true,
    label: 'tokens / min',
    help: 'tokens per minute',
    row: { resource: 'tokens', window: 'minute' },
  },
  {
    name: 'tpd',
    kind: 'count',
    plan: 'optional',
    key: true,
    label: 'tokens / day',
    help: 'tokens per day (24 h)',
    row: { resource: 'tokens', window: 'day' },
  },
  {
    name: 'max_context_tokens',
    kind: 'count',
    plan: 'optional',
    key: false,
    label: 'context tokens',
    help: 'input tokens a request may send (over it: 400 context_length_exceeded)',
    row: null,
  },
  { name: 'budget', kind: 'budget', plan: 'optional', key: true, label: 'budget' },
  { name: 'models', kind: 'models', plan: 'required', key: true, label: 'models' },
] as const satisfies readonly LimitSetting[]

type Setting = (typeof LIMIT_SETTINGS)[number]
type Counts = Extract<Setting, { kind: 'count' }>
/** The whole-number settings that make a sliding-window row: `rpm`, `rpd`, `tpm`, `tpd`. */
export type WindowName = Extract<Counts, { row: object }>['name']
/** The whole-number settings a key may set itself. */
export type KeyCountName = Extract<Counts, { key: true }>['name']

const isCount = (s: LimitSetting): s is CountSetting => s.kind === 'count'

/** Every whole-number setting, plans' and keys'. */
export const COUNTS: readonly CountSetting[] = (LIMIT_SETTINGS as readonly LimitSetting[]).filter(isCount)

/** The settings that make sliding-window rows, each with its row. */
export const WINDOW_COUNTS = COUNTS.filter((s) => s.row !== null) as ReadonlyArray<
  CountSetting & { name: WindowName; row: NonNullable<CountSetting['row']> }
>

/** The whole-number settings a key may set itself. */
export const KEY_COUNTS = COUNTS.filter((s) => s.key) as ReadonlyArray<CountSetting & { name: KeyCountName }>

/** The counts a key may set, each valued by `value`: `{ rpm, rpd, tpm, tpd }`. */
export const keyCounts = (value: (name: KeyCountName) => number | null) =>
  Object.fromEntries(KEY_COUNTS.map((s) => [s.name, value(s.name)])) as { [N in KeyCountName]: number | null }

/** The fields of a key's own limits, as the admin API takes and shows them. */
export const KEY_LIMIT_FIELDS: readonly string[] = LIMIT_SETTINGS.filter((s) => s.key).map((s) => s.name)

/**
 * What holds an account over time — the rows (`rpm`, `rpd`, `tpm`, `tpd`, `budget`) — and the models
 * it may use: the console's plans table. A count without a row (`max_context_tokens`) caps each
 * request alone, and is shown where the plan's whole config is (`GET /admin/v1/plans`).
 */
export const ACCOUNT_LIMITS: readonly LimitSetting[] = LIMIT_SETTINGS.filter(
  (s: LimitSetting) => s.kind !== 'count' || s.row !== null,
)

/** A window row's name in messages: `tokens per minute (tpm)`; undefined for a row no setting makes. */
export function windowName(resource: LimitResource, window: string): string | undefined {
  const s = WINDOW_COUNTS.find((c) => c.row.resource === resource && c.row.window === window)
  return s && `${resource} per ${window} (${s.name})`
}

/** The command line's flags for a key setting: `--rpm`; a budget's two; `--models`. */
export function cliFlags(s: LimitSetting): string[] {
  return s.kind === 'budget' ? [`${s.name}-usd`, `${s.name}-period`] : [s.name]
}

/** The console's form label: `requests / min` → `Requests/min`. */
export const formLabel = (s: LimitSetting): string =>
  s.label.charAt(0).toUpperCase() + s.label.slice(1).replace(/ \/ /g, '/')
