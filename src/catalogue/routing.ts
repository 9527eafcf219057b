/**
 * @module
 * Model ids and the model catalogue. A model id is `<prefix>/<name>`: the prefix (everything before
 * the first `/`) picks the provider, the rest is the model's `name` in that provider's config, and
 * may itself contain `/` (`openrouter/meta-llama/llama-3-70b`). Ids are case-sensitive.
 *
 * @example
 * const catalogue = new Catalogue(config.providers, config.aliases)
 * const { provider, model, id } = catalogue.resolve('openai/gpt-4o-mini')
 * planAllows(['tier:free', 'demo/*'], id, model)
 * catalogue.route('team/coder').members // a virtual model's pick, then its other members
 */

import type { ModelConfig, ProviderConfig } from '../config/schema.ts'
import type { AliasConfig } from '../config/schema-aliases.ts'
import type { SessionHash } from '../util/affinity.ts'
import { GatewayError } from '../util/errors.ts'
import { clip } from '../util/text.ts'
import { type Alias, Aliases } from './aliases.ts'
import type { CatalogueEntry } from './entry.ts'

export interface ModelId {
  prefix: string
  name: string
}

/** What a request's model id names, and the models that may answer it. */
export interface Routed {
  /** The id the request named. */
  named: string
  /** The alias it named (exact or pattern); null when it named a model. */
  alias: Alias | null
  /** The models, in the order to try: a pool's pick first, then its other members by weight. */
  members: CatalogueEntry[]
}

const MODELS_HINT = 'GET /v1/models lists the models your key may use.'

function splitModelId(id: string): ModelId | null {
  const slash = id.indexOf('/')
  if (slash <= 0 || slash === id.length - 1) return null
  return { prefix: id.slice(0, slash), name: id.slice(slash + 1) }
}

function invalidModel(id: string, suggestion?: string): GatewayError {
  const shown = JSON.stringify(clip(id))
  const didYouMean = suggestion ? ` Did you mean "${suggestion}"?` : ''
  return new GatewayError(
    400,
    'invalid_model',
    `The model id ${shown} is not of the form "<prefix>/<model>", e.g. "openai/gpt-4o-mini".${didYouMean} ${MODELS_HINT}`,
    { param: 'model' },
  )
}

/** Splits `prefix/name`; 400 `invalid_model` when there is no `/` or either side is empty. */
export function parseModelId(id: string): ModelId {
  const parts = splitModelId(id)
  if (!parts) throw invalidModel(id)
  return parts
}

/** The configured providers and their models, looked up by model id. Built once at start-up. */
export class Catalogue {
  readonly #byPrefix = new Map<string, Map<string, CatalogueEntry>>()
  readonly #entries: CatalogueEntry[] = []
  /** Unprefixed name → the first id with that name, to suggest a fix for a missing prefix. */
  readonly #byName = new Map<string, string>()
  readonly aliases: Aliases

  /**
   * Throws a plain `Error` on a duplicate prefix or model name, or an alias leading to no model:
   * that is a broken config (the config checks refuse it first), not a request.
   */
  constructor(providers: readonly ProviderConfig[], aliases: readonly AliasConfig[] = []) {
    for (const provider of providers) {
      if (this.#byPrefix.has(provider.prefix))
        throw new Error(`duplicate provider prefix "${provider.prefix}"`)
      const models = new Map<string, CatalogueEntry>()
      this.#byPrefix.set(provider.prefix, models)
      for (const model of provider.models) {
        const id = `${provider.prefix}/${model.name}`
        if (models.has(model.name)) throw new Error(`duplicate model "${id}"`)
        const entry = { id, provider, model }
        models.set(model.name, entry)
        this.#entries.push(entry)
        if (!this.#byName.has(model.name)) this.#byName.set(model.name, id)
      }
    }
    this.aliases = new Aliases(aliases, (id) => this.model(id))
  }

  /** The model with this id, if one is configured (aliases not looked up). */
  model(id: string): CatalogueEntry | undefined {
    const parts = splitModelId(id)
    return parts ? this.#byPrefix.get(parts.prefix)?.get(parts.name) : undefined
  }

  /**
   * What a request's model id names (DESIGN §13): a model, else an exact alias, else the longest
   * pattern it matches; a virtual model's members in this request's order. Errors as `resolve`.
   * `session`: the request's agent session, which keeps a virtual model's target (aliases.ts `Pool`).
   */
  route(
    id: string,
    session?: SessionHash | null,
    /** Which members of an alias the request may use: a virtual model picks among them (aliases.ts `Pool`). */
    eligible?: (alias: Alias, entry: CatalogueEntry) => boolean,
  ): Routed {
    const entry = this.model(id)
    if (entry) return { named: id, alias: null, members: [entry] }
    const alias = this.aliases.find(id)
    if (alias)
      return {
        named: id,
        alias,
        members: alias.pool.pick(session, eligible && ((e: CatalogueEntry) => eligible(alias, e))),
      }
    return { named: id, alias: null, members: [this.resolve(id)] }
  }

  /**
   * The provider and model for a model id (no alias).
   * 400 `invalid_model` for an id without a prefix, 404 `model_not_found` for an unknown one.
   */
  resolve(id: string): CatalogueEntry {
    const parts = splitModelId(id)
    if (!parts) throw invalidModel(id, this.#byName.get(id))
    const entry = this.#byPrefix.get(parts.prefix)?.get(parts.name)
    if (entry) return entry
    const shown = JSON.stringify(clip(id))
    const why = this.#byPrefix.has(parts.prefix)
      ? `provider "${parts.prefix}" has no model "${clip(parts.name)}"`
      : this.aliases.prefixes.has(parts.prefix)
        ? `no alias has this id`
        : `no provider has the prefix "${clip(parts.prefix)}"`
    throw new GatewayError(
      404,
      'model_not_found',
      `The model ${shown} does not exist: ${why}. ${MODELS_HINT}`,
      {
        param: 'model',
      },
    )
  }

  /** Every model, in config order (a copy: filter it by plan freely). */
  list(): CatalogueEntry[] {
    return this.#entries.slice()
  }
}

/**
 * Whether a plan's `models` patterns admit a model or an alias: `*` (everything), `tier:NAME`
 * (models whose `tier` is NAME; an alias whose targets all are), `prefix/*` (every model or alias
 * of that prefix), or an exact id. No other wildcards.
 */
export function planAllows(
  patterns: readonly string[],
  id: string,
  model: Pick<ModelConfig, 'tier'>,
): boolean {
  for (const pattern of patterns) {
    if (pattern === '*' || pattern === id) return true
    if (pattern.startsWith('tier:')) {
      if (model.tier !== undefined && pattern.slice(5) === model.tier) return true
    } else if (pattern.endsWith('/*') && id.startsWith(pattern.slice(0, -1))) {
      return true
    }
  }
  return false
}

/** 403 `model_not_in_plan`; the message names the plan when it is known. */
export function notInPlan(id: string, planName?: string): GatewayError {
  const plan = planName === undefined ? 'your plan' : `your plan "${planName}"`
  return new GatewayError(
    403,
    'model_not_in_plan',
    `The model "${id}" is not included in ${plan}. Choose a model it includes (GET /v1/models lists them) or upgrade your plan.`,
    { param: 'model' },
  )
}
