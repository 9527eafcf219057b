/** @module `switchyard usage ACCOUNT`, `switchyard models`, `switchyard config check`. */
import { usageReport } from '../accounts/usage-report.ts'
import { priceText } from '../catalogue/price-view.ts'
import { Catalogue } from '../catalogue/routing.ts'
import { ConfigError } from '../config/index.ts'
import { WINDOW_COUNTS } from '../config/limit-settings.ts'
import { modelEntries } from '../server/routes/models.ts'
import { systemClock } from '../util/clock.ts'
import { need, type Parsed, UsageError } from './args.ts'
import {
  checkCommand,
  configPath,
  hostSetting,
  intSetting,
  loadConfig,
  Output,
  readConfigFile,
  subcommand,
  withAccounts,
} from './context.ts'
import type { Io } from './io.ts'
import { fields, table } from './text.ts'

export async function usageCommand(p: Parsed, io: Io): Promise<number> {
  const spec = { usage: 'usage ACCOUNT', words: 2 }
  checkCommand(p, spec)
  const name = need(p, 1, 'ACCOUNT', spec.usage)
  return withAccounts(p, io, async (svc, store, config) => {
    const report = await usageReport({ store, config, clock: systemClock }, await svc.getAccount(name), null)
    new Output(p, io).result(report, () =>
      [
        fields({ ...report.account_information, key: undefined }),
        '',
        fields({
          ...Object.fromEntries(WINDOW_COUNTS.map((s) => [s.name, report.rate_limits[s.name]])),
          minute: report.rate_limits.minute,
          day: report.rate_limits.day,
          tokens_minute: report.rate_limits.tokens_minute,
          tokens_day: report.rate_limits.tokens_day,
          budget: report.budget ?? 'none',
        }),
        '',
        fields({ ...report.subscription_details, history: undefined }),
        '',
        fields({
          current_minute: report.usage.current_minute,
          current_day: report.usage.current_day,
          today: report.usage.today,
          last_24h: report.usage.last_24h,
        }),
        '',
        table(
          Object.entries(report.usage.by_model).map(([model, t]) => ({ model, ...t })),
          [
            'model',
            'requests',
            'prompt_tokens',
            'cached_tokens',
            'cache_write_tokens',
            'completion_tokens',
            'cost_usd',
            'errors',
            'estimated_requests',
          ],
        ),
      ].join('\n'),
    )
    return 0
  })
}

export async function modelsCommand(p: Parsed, io: Io): Promise<number> {
  checkCommand(p, { usage: 'models', words: 1 })
  const config = await loadConfig(p, io, { secrets: false })
  const list = modelEntries(new Catalogue(config.providers, config.aliases), Math.floor(Date.now() / 1000))
  new Output(p, io).result({ object: 'list', data: list }, () =>
    table(
      list.map((m) => ({ ...m, price: priceText(m) })),
      ['id', 'type', 'provider_kind', 'context_window', 'max_output_tokens', 'tier', 'price', 'features'],
    ),
  )
  return 0
}

export async function configCommand(p: Parsed, io: Io): Promise<number> {
  subcommand(p, 'config', { check: { usage: 'config check', words: 2 } })
  const path = configPath(p, io)
  const out = new Output(p, io)
  try {
    const c = await readConfigFile(path, io.env)
    const env = environmentProblems(io, path)
    if (env.length > 0) throw new ConfigError(`${path} (with this environment)`, env)
    const models = c.providers.reduce((n, pr) => n + pr.models.length, 0)
    out.result(
      {
        ok: true,
        path,
        providers: c.providers.length,
        models,
        plans: Object.keys(c.plans).length,
        problems: [],
      },
      () =>
        `${path}: OK (${c.providers.length} providers, ${models} models, ${Object.keys(c.plans).length} plans)`,
    )
    return 0
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err
    if (out.json) out.result({ ok: false, path, problems: err.problems }, () => '')
    else io.err(err.message)
    return 1
  }
}

/** What `serve` reads from the environment besides the file, refused here as `serve` refuses it. */
function environmentProblems(io: Io, path: string): Array<{ path: string; message: string }> {
  const none: Parsed = { positionals: [], flags: {}, shortFlags: [] }
  const checks: Array<[string, () => unknown]> = [
    ['$PORT', () => intSetting(none, io, 'port', 'PORT', 0, 65535)],
    ['$HOST', () => hostSetting(none, io, path)],
  ]
  return checks.flatMap(([name, check]) => {
    try {
      check()
      return []
    } catch (err) {
      if (!(err instanceof UsageError)) throw err
      return [{ path: name, message: err.message }]
    }
  })
}
