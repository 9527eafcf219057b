/**
 * @module
 * The checks a schema cannot state: duplicate prefixes and model names, references to plans and
 * providers, what a provider kind's wire can carry, prices kept to the micro-dollar, the admin
 * token. They run beside the schema's own problems, so `config check` lists both at once: each
 * check reads only values the schema passed (`Intact`, intact.ts), and a reference counts as
 * found when its target exists at all, valid or not (its own problems are reported where it is).
 *
 * @example
 * crossCheck(doc, problems, true, intactExcept(['/plans/free/rpm']))
 * // problems: [{ path: '/default_plan', message: "plan 'gold' is not defined under plans" }]
 */
import { microUnits } from '../util/micro-units.ts'
import { aOrAn } from '../util/text.ts'
import { type AliasNames, checkAliases, type Prefixes } from './check-aliases.ts'
import { checkResilience } from './check-resilience.ts'
import { entries, type Intact, isMap, list, type Problem, step } from './intact.ts'
import { KIND_LIMITS, KIND_TEMPERATURE } from './kind-limits.ts'
import { listenHostProblem } from './listen-host.ts'
import { listEntryProblem } from './model-list.ts'
import { checkModelType } from './models.ts'
import type { RawConfig } from './schema.ts'

/** Shorter admin tokens are refused: the admin API mints keys, and 32 characters cannot be guessed. */
export const MIN_ADMIN_TOKEN_LENGTH = 32

/**
 * `raw` is the document as read: typed as it would be if valid, but only the parts `intact`
 * passes may be relied on. `secrets`: check what only `serve` (and `config check`) need —
 * provider keys, the admin token, the address to listen on.
 */
export function crossCheck(raw: RawConfig, problems: Problem[], secrets: boolean, intact: Intact): void {
  if (secrets && intact('/admin/token')) checkAdminToken(raw.admin?.token, problems)
  if (secrets && intact('/metrics/token')) checkMetricsToken(raw.metrics?.token, problems)
  const host = secrets && intact('/server/host') ? raw.server?.host : undefined
  const hostProblem = host === undefined ? null : listenHostProblem(host)
  if (hostProblem) problems.push({ path: '/server/host', message: hostProblem })
  const prefixes = checkProviders(raw, problems, secrets, intact)
  checkResilience(raw, problems, secrets, intact)
  if (intact('/database/url') && intact('/database/path') && raw.database?.url && raw.database.path) {
    problems.push({ path: '/database', message: 'set either path (SQLite) or url (PostgreSQL), not both' })
  }
  if (intact('/limits/redis_url') && raw.limits?.redis_url && !raw.database?.url) {
    problems.push({
      path: '/limits/redis_url',
      message: 'Redis admissions need a shared database for usage: set database.url (PostgreSQL)',
    })
  }
  const aliases = checkAliases(raw, problems, prefixes, intact)
  checkPlans(raw, problems, prefixes, aliases, intact)
  checkWebhooks(raw, problems, intact)
}

/**
 * One webhook per URL: a delivery is one row per (event, URL) and the sender finds a row's webhook
 * by its URL, so a second entry with the same URL would be signed with the first one's secret and
 * shaped by its format. Subscribe the one entry to every event instead.
 */
function checkWebhooks(raw: RawConfig, problems: Problem[], intact: Intact): void {
  const first = new Map<string, number>()
  for (const [i, w] of (raw.alerts?.webhooks ?? []).entries()) {
    if (!intact(`/alerts/webhooks/${i}/url`) || typeof w.url !== 'string') continue
    const before = first.get(w.url)
    if (before === undefined) first.set(w.url, i)
    else
      problems.push({
        path: `/alerts/webhooks/${i}/url`,
        message: `the same URL as alerts.webhooks[${before}]: give one webhook every event it takes`,
      })
  }
}

function checkAdminToken(token: string | undefined, problems: Problem[]): void {
  if (!token) return
  if (token.length < MIN_ADMIN_TOKEN_LENGTH) {
    problems.push({
      path: '/admin/token',
      message: `admin.token is ${token.length} characters; it must be at least ${MIN_ADMIN_TOKEN_LENGTH} (generate one with \`openssl rand -hex 32\`), or empty to turn the admin API off`,
    })
  }
  // It travels as `Authorization: Bearer <token>`, one word of a header: with a space (or a
  // character a header cannot carry) no request or console sign-in could ever present it.
  if (!/^[\x21-\x7e]+$/.test(token)) {
    problems.push({
      path: '/admin/token',
      message:
        'admin.token must be printable ASCII without spaces (it is sent as "Authorization: Bearer <token>"); generate one with `openssl rand -hex 32`',
    })
  }
}

/** Sent as `Authorization: Bearer <token>` by the scraper: one header word, as the admin token. */
function checkMetricsToken(token: string | undefined, problems: Problem[]): void {
  if (token && !/^[\x21-\x7e]+$/.test(token)) {
    problems.push({
      path: '/metrics/token',
      message:
        'metrics.token must be printable ASCII without spaces (it is sent as "Authorization: Bearer <token>"); generate one with `openssl rand -hex 32`',
    })
  }
}

/** Checks every provider and its models; returns the prefixes the file names and their models. */
function checkProviders(raw: RawConfig, problems: Problem[], secrets: boolean, intact: Intact): Prefixes {
  const prefixes: Prefixes = new Map()
  list(raw.providers).forEach((p, i) => {
    const at = `/providers/${i}`
    const names = new Set<string>()
    if (typeof p?.prefix === 'string') {
      const dup = prefixes.has(p.prefix)
      if (dup) problems.push({ path: `${at}/prefix`, message: `duplicate prefix '${p.prefix}'` })
      // A duplicate prefix leaves no one list of models to judge a plan's references by.
      prefixes.set(p.prefix, intact(`${at}/models`) && !dup ? names : null)
    }
    const kind = intact(`${at}/kind`) ? p.kind : undefined
    list(p?.models).forEach((m, j) => {
      const path = `${at}/models/${j}`
      if (typeof m?.name === 'string') {
        if (names.has(m.name)) problems.push({ path: `${path}/name`, message: `duplicate model '${m.name}'` })
        names.add(m.name)
      }
      if (intact(`${path}/pricing`)) {
        // The tiers' prices and the per-call prices nest one or two levels down.
        const prices = (o: object, at: string): void => {
          for (const [field, usd] of Object.entries(o)) {
            if (typeof usd === 'object' && usd !== null) prices(usd, `${at}/${field}`)
            else if (microUnits(usd) === null) {
              problems.push({
                path: `${at}/${field}`,
                message: `${usd} has more than 6 decimals; prices are ${at.endsWith('/per_call') ? 'USD per call' : 'USD per 1M tokens'}, kept to the micro-dollar`,
              })
            }
          }
        }
        prices(m.pricing ?? {}, `${path}/pricing`)
      }
      if (intact(`${path}/temperature`) && m.temperature && m.temperature.min > m.temperature.max) {
        problems.push({ path: `${path}/temperature`, message: 'min is greater than max' })
      }
      if (!kind) return
      const range = KIND_TEMPERATURE[kind]
      if (range && intact(`${path}/temperature`) && m.temperature) {
        if (m.temperature.min < range.min || m.temperature.max > range.max) {
          problems.push({
            path: `${path}/temperature`,
            message: `${aOrAn(kind)} model takes a temperature from ${range.min} to ${range.max} (its API's range); narrow it or leave it out`,
          })
        }
      }
      if (intact(`${path}/features`)) {
        m.features?.forEach((feature, k) => {
          const why = KIND_LIMITS[kind][feature]
          if (why) {
            problems.push({
              path: `${path}/features/${k}`,
              message: `${aOrAn(kind)} model cannot have '${feature}': ${why}; remove it from the list`,
            })
          }
        })
      }
      if (intact(`${path}/type`) && m && typeof m === 'object') checkModelType(kind, m, path, problems)
    })
    if (!kind) return
    if (intact(`${at}/max_tokens_param`) && p.max_tokens_param !== undefined && kind !== 'openai') {
      problems.push({
        path: `${at}/max_tokens_param`,
        message: `is for kind openai only (a ${kind} provider's own wire names the limit)`,
      })
    }
    if (intact(`${at}/wire`) && p.wire === 'responses' && kind !== 'openai') {
      problems.push({
        path: `${at}/wire`,
        message: `'responses' is for kind openai only (a ${kind} provider speaks its own wire)`,
      })
    }
    if (secrets && intact(`${at}/api_key`) && kind !== 'demo' && p.api_key === '') {
      problems.push({
        path: `${at}/api_key`,
        message: 'empty API key (set the environment variable it names)',
      })
    }
  })
  return prefixes
}

function checkPlans(
  raw: RawConfig,
  problems: Problem[],
  prefixes: Prefixes,
  aliases: AliasNames,
  intact: Intact,
): void {
  const names = { prefixes, aliases, tiers: tiersOf(raw, intact) }
  const plans = entries(raw.plans)
  const defined = new Set(plans.map(([name]) => name))
  if (intact('/default_plan') && isMap(raw.plans) && !defined.has(raw.default_plan)) {
    problems.push({ path: '/default_plan', message: `plan '${raw.default_plan}' is not defined under plans` })
  }
  for (const [name, plan] of plans) {
    const at = `/plans/${step(name)}`
    const exp = intact(`${at}/on_expiry`) ? plan.on_expiry : undefined
    if (exp && exp !== 'disable') {
      if (!defined.has(exp.downgrade)) {
        problems.push({
          path: `${at}/on_expiry/downgrade`,
          message: `plan '${exp.downgrade}' is not defined`,
        })
      } else if (exp.downgrade === name) {
        problems.push({ path: `${at}/on_expiry/downgrade`, message: 'a plan cannot downgrade to itself' })
      }
    }
    if (intact(`${at}/budget`) && plan.budget && microUnits(plan.budget.usd) === null) {
      problems.push({
        path: `${at}/budget/usd`,
        message: `${plan.budget.usd} has more than 6 decimals (or is too large); budgets are kept to the micro-dollar`,
      })
    }
    if (!intact(`${at}/models`)) continue
    plan.models.forEach((entry, i) => {
      const message = listEntryProblem(names, entry)
      if (message) problems.push({ path: `${at}/models/${i}`, message })
    })
  }
}

/** The tiers the models have (any valid or not), or null when a provider's model list cannot be read. */
function tiersOf(raw: RawConfig, intact: Intact): Set<string> | null {
  if (!Array.isArray(raw.providers)) return null
  const tiers = new Set<string>()
  for (const [i, p] of raw.providers.entries()) {
    if (!intact(`/providers/${i}/models`)) return null
    for (const m of list(p.models)) if (typeof m?.tier === 'string') tiers.add(m.tier)
  }
  return tiers
}
