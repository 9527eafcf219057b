/**
 * @module `GET /v1/models`: the models and listed aliases this key's plan may use, in OpenAI's
 * list shape (Anthropic's for clients that send `anthropic-version`; Google's on `/v1beta/models`
 * and for Google's SDK).
 */
import { Elysia } from 'elysia'
import { apiKeyOrBearer, authenticateToken, bearer, googleApiKey } from '../../auth/authenticate.ts'
import type { Alias } from '../../catalogue/aliases.ts'
import type { CatalogueEntry } from '../../catalogue/entry.ts'
import { keyReaches } from '../../catalogue/key-reach.ts'
import { priceView } from '../../catalogue/price-view.ts'
import { reachable } from '../../catalogue/reach.ts'
import type { Catalogue } from '../../catalogue/routing.ts'
import { planAllows } from '../../catalogue/routing.ts'
import { modelType } from '../../operations/operation.ts'
import { GatewayError } from '../../util/errors.ts'
import { clip } from '../../util/text.ts'
import type { Deps } from '../deps.ts'

/** Who is listing: the plan's `models` and the key's own list (null: none); absent, everything. */
export interface Lister {
  plan: readonly string[]
  key: readonly string[] | null | undefined
}

/**
 * The catalogue as users see it (also what `switchyard models` prints, and what every surface's
 * model list is made from): the models, then the listed exact aliases (`targets`: the models they
 * send to, with their weights; the other fields are their first target's), each only where the
 * caller may use it.
 */
export function modelEntries(catalogue: Catalogue, created: number, lister?: Lister) {
  const models = catalogue
    .list()
    .filter((e) => !lister || allows(lister)(e.id, e.model.tier))
    .map((e) => modelEntry(e, e.id, created))
  const aliases = catalogue.aliases
    .exact()
    .filter((a) => a.listed && mayUse(a, a.id, lister))
    .map((a) => aliasEntry(a, a.id, created))
  return [...models, ...aliases]
}

/**
 * `GET /v1/models/{id}` for an id only a pattern alias names (a dated id an agent sends): the
 * entry the list would show for it — its own id, its target's fields and `targets` — where the
 * caller may use it; undefined otherwise. A pattern names no one id, so the list never shows it.
 */
export function patternEntry(catalogue: Catalogue, id: string, created: number, lister?: Lister) {
  if (catalogue.model(id)) return undefined
  const alias = catalogue.aliases.find(id)
  if (!alias?.pattern || !mayUse(alias, id, lister)) return undefined
  return aliasEntry(alias, id, created)
}

/**
 * The catalogue as the operator sees it (`GET /admin/v1/models`, the console's models page): every
 * model, then every alias — listed or not, exact or a pattern — with its targets and weights, its
 * `listed` flag and whether it is a `pattern`; each beside the plans that reach it (an unlisted or
 * pattern alias through its targets, DESIGN §13).
 */
export function operatorEntries(
  catalogue: Catalogue,
  created: number,
  plans: Record<string, { models: readonly string[] }>,
) {
  const reachedBy = (can: (plan: readonly string[]) => boolean) =>
    Object.entries(plans)
      .filter(([, p]) => can(p.models))
      .map(([name]) => name)
  const models = catalogue.list().map((e) => ({
    ...modelEntry(e, e.id, created),
    plans: reachedBy((plan) => planAllows(plan, e.id, e.model)),
  }))
  const aliases = catalogue.aliases.all().map((a) => ({
    ...aliasEntry(a, a.id, created),
    listed: a.listed && !a.pattern,
    pattern: a.pattern,
    plans: reachedBy((plan) => mayUse(a, a.id, { plan, key: null })),
  }))
  return [...models, ...aliases]
}

const allows = (list: Lister) => (id: string, tier: string | undefined) =>
  planAllows(list.plan, id, { tier }) && keyReaches(list.key, id, tier)

/** Whether the lister reaches any member of the alias (every member: listing picks none). */
const mayUse = (a: Alias, named: string, lister: Lister | undefined) =>
  !lister ||
  reachable({ named, alias: a, members: a.pool.members.map((m) => m.entry) }, allows(lister)).length > 0

/** An alias as a model entry under `id`: its first target's fields, `targets` the models it sends to. */
function aliasEntry(a: Alias, id: string, created: number) {
  return {
    ...modelEntry(a.pool.members[0]!.entry, id, created),
    owned_by: id.slice(0, id.indexOf('/')),
    description: a.description ?? null,
    targets: a.pool.members.map((m) => ({ model: m.entry.id, weight: m.weight })),
  }
}

function modelEntry(e: CatalogueEntry, id: string, created: number) {
  return {
    id,
    object: 'model' as const,
    created,
    owned_by: e.provider.prefix,
    provider_kind: e.provider.kind,
    type: modelType(e.model),
    context_window: e.model.context_window,
    // An embedding model writes no tokens and takes no temperature: its 0 and range meant nothing.
    ...(modelType(e.model) === 'chat' ? { max_output_tokens: e.model.max_output_tokens } : {}),
    features: e.model.features,
    ...(modelType(e.model) === 'chat' ? { temperature: e.model.temperature ?? { min: 0, max: 2 } } : {}),
    tier: e.model.tier ?? null,
    description: e.model.description ?? null,
    ...(e.model.dimensions === undefined ? {} : { dimensions: e.model.dimensions }),
    ...priceView(e.model.pricing),
    ...(e.provider.kind === 'demo' ? { demo: true } : {}),
  }
}

type ModelEntry = ReturnType<typeof modelEntries>[number]

/**
 * Anthropic's model object, for clients that send `anthropic-version` (Claude Code's model picker).
 * Only chat models are listed so: a Messages client can call nothing else (an embedding model in
 * Claude Code's picker answers every turn with a 400).
 */
function anthropicModel(m: ModelEntry) {
  return {
    type: 'model' as const,
    id: m.id,
    display_name: m.description ?? m.id,
    created_at: new Date(m.created * 1000).toISOString(),
  }
}

const anthropicStyle = (request: Request) => request.headers.has('anthropic-version')

/** Anthropic's page size: `limit` from 1 to 1,000, 20 when not sent. */
const PAGE = { default: 20, max: 1000 }

/**
 * One page of Anthropic's list-models (`?limit`, `after_id` or `before_id`: the page right after or
 * right before that model), with `first_id` / `last_id` to page on and `has_more` in the direction
 * asked. A cursor the list does not hold, both cursors, or a bad `limit` → 400 naming it.
 */
function anthropicPage<M extends { id: string }>(models: M[], url: string) {
  const query = new URL(url).searchParams
  const raw = query.get('limit')
  const limit = raw === null ? PAGE.default : /^\d{1,4}$/.test(raw) ? Number(raw) : Number.NaN
  if (!(limit >= 1 && limit <= PAGE.max))
    throw new GatewayError(
      400,
      'invalid_value',
      `limit must be an integer from 1 to ${PAGE.max}; got "${clip(raw ?? '')}".`,
      { param: 'limit' },
    )
  const after = query.get('after_id')
  const before = query.get('before_id')
  if (after !== null && before !== null)
    throw new GatewayError(400, 'invalid_value', 'Send after_id or before_id, not both.', {
      param: 'before_id',
    })
  const cursor = after ?? before
  const at = cursor === null ? -1 : models.findIndex((m) => m.id === cursor)
  if (cursor !== null && at < 0)
    throw new GatewayError(
      400,
      'invalid_value',
      `${after !== null ? 'after_id' : 'before_id'} '${clip(cursor)}' is not a model in this list; send an id from first_id or last_id.`,
      { param: after !== null ? 'after_id' : 'before_id' },
    )
  const start = before !== null ? Math.max(0, at - limit) : at + 1
  const end = before !== null ? at : Math.min(models.length, start + limit)
  const page = models.slice(start, end)
  return {
    data: page,
    has_more: before !== null ? start > 0 : end < models.length,
    first_id: page[0]?.id ?? null,
    last_id: page.at(-1)?.id ?? null,
  }
}

/**
 * Google's model list (`GET /v1beta/models`, and `/v1/models` from `@google/genai`, which sends
 * `x-goog-api-key` and calls API version v1 by default): `{"models": [...]}`, each named
 * `models/<prefix>/<model>` with its token limits and the methods it serves.
 */
export const googleStyle = (request: Request) =>
  new URL(request.url).pathname.startsWith('/v1beta/') ||
  request.headers.has('x-goog-api-key') ||
  request.headers.has('x-goog-api-client')

function geminiModel(m: ModelEntry) {
  const chat = m.type === 'chat'
  return {
    name: `models/${m.id}`,
    baseModelId: m.id,
    version: '1',
    displayName: m.id,
    description: m.description ?? '',
    inputTokenLimit: m.context_window,
    outputTokenLimit: m.max_output_tokens ?? 0,
    supportedGenerationMethods: chat
      ? ['generateContent', 'streamGenerateContent', 'countTokens']
      : ['embedContent', 'batchEmbedContents'],
    ...(chat
      ? {
          temperature: 1,
          maxTemperature: m.temperature?.max ?? 2,
          thinking: m.features.includes('reasoning'),
        }
      : {}),
  }
}

export function modelRoutes(deps: Deps) {
  const created = Math.floor(deps.clock.now() / 1000)
  const allowed = async (request: Request) => {
    // Anthropic clients send their key as x-api-key.
    const token = googleStyle(request)
      ? googleApiKey(request.headers, request.url)
      : anthropicStyle(request)
        ? apiKeyOrBearer(request.headers)
        : bearer(request.headers.get('authorization'))
    const auth = await authenticateToken(deps, token)
    const ex = deps.traffic.of(request)
    if (ex) {
      ex.account = auth.account.name
      ex.keyPrefix = auth.key.prefix
    }
    // A key with its own model list sees only those (exact ids, within the plan's).
    const lister: Lister = { plan: auth.plan.plan!.models, key: auth.key.limits?.models }
    return { lister, data: modelEntries(deps.catalogue, created, lister) }
  }
  /** Google's lookup: the model the path names among those the key may use; 404 naming `model` otherwise. */
  const one = async (request: Request, raw: string) => {
    const { data, lister } = await allowed(request)
    // Google's clients may name a model as its resource, `models/<prefix>/<model>`.
    const id = decoded(raw)?.replace(/^models\//, '') ?? null
    const entry =
      id === null
        ? undefined
        : (data.find((m) => m.id === id) ?? patternEntry(deps.catalogue, id, created, lister))
    if (!entry)
      throw new GatewayError(
        404,
        'model_not_found',
        `The model '${clip(id ?? raw)}' does not exist or is not in your plan; see GET /v1/models.`,
        { param: 'model' },
      )
    return entry
  }
  return new Elysia({ name: 'switchyard.models' })
    .get('/v1/models', async ({ request }) => {
      const { data } = await allowed(request)
      if (googleStyle(request)) return { models: data.map(geminiModel) }
      if (!anthropicStyle(request)) return { object: 'list', data }
      return anthropicPage(data.filter((m) => m.type === 'chat').map(anthropicModel), request.url)
    })
    .get('/v1beta/models', async ({ request }) => ({
      models: (await allowed(request)).data.map(geminiModel),
    }))
    .get('/v1beta/models/*', async ({ request, params }) => geminiModel(await one(request, params['*'])))
    .get('/v1/models/*', async ({ request, params }) => {
      if (googleStyle(request)) return geminiModel(await one(request, params['*']))
      // Authenticated first, as for any id; a malformed %-escape names no model (404 below).
      const { data, lister } = await allowed(request)
      const id = decoded(params['*'])
      const found =
        id === null
          ? undefined
          : (data.find((m) => m.id === id) ?? patternEntry(deps.catalogue, id, created, lister))
      const entry = found && (found.type === 'chat' || !anthropicStyle(request)) ? found : undefined
      if (entry && anthropicStyle(request)) return anthropicModel(entry)
      if (!entry)
        throw new GatewayError(
          404,
          'model_not_found',
          `The model '${clip(id ?? params['*'])}' does not exist or is not in your plan; see GET /v1/models.`,
          { param: 'model' },
        )
      return entry
    })
}

/** The id in the path, or null when it holds a malformed %-escape (`%ZZ`, a cut UTF-8 sequence). */
function decoded(raw: string): string | null {
  try {
    return decodeURIComponent(raw)
  } catch {
    return null
  }
}
