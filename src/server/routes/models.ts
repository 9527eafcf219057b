/** @module `GET /v1/models`: the models this key's plan may use, in OpenAI's list shape. */
import { Elysia } from 'elysia'
import { apiKeyOrBearer, authenticateToken, bearer } from '../../auth/authenticate.ts'
import { priceView } from '../../catalogue/price-view.ts'
import type { Catalogue } from '../../catalogue/routing.ts'
import { planAllows } from '../../catalogue/routing.ts'
import { modelType } from '../../operations/operation.ts'
import { GatewayError } from '../../util/errors.ts'
import { clip } from '../../util/text.ts'
import type { Deps } from '../deps.ts'

/** One entry of the catalogue as users see it (also what `switchyard models` prints). */
export function modelEntries(
  catalogue: Catalogue,
  created: number,
  allow: (id: string, m: Parameters<typeof planAllows>[2]) => boolean = () => true,
) {
  return catalogue
    .list()
    .filter((e) => allow(e.id, e.model))
    .map((e) => ({
      id: e.id,
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
    }))
}

type ModelEntry = ReturnType<typeof modelEntries>[number]

/** Anthropic's model object, for clients that send `anthropic-version` (Claude Code's model picker). */
function anthropicModel(m: ModelEntry) {
  return {
    type: 'model' as const,
    id: m.id,
    display_name: m.description ?? m.id,
    created_at: new Date(m.created * 1000).toISOString(),
  }
}

const anthropicStyle = (request: Request) => request.headers.has('anthropic-version')

export function modelRoutes(deps: Deps) {
  const created = Math.floor(deps.clock.now() / 1000)
  const allowed = async (request: Request) => {
    // Anthropic clients send their key as x-api-key.
    const token = anthropicStyle(request)
      ? apiKeyOrBearer(request.headers)
      : bearer(request.headers.get('authorization'))
    const auth = await authenticateToken(deps, token)
    const ex = deps.traffic.of(request)
    if (ex) {
      ex.account = auth.account.name
      ex.keyPrefix = auth.key.prefix
    }
    const patterns = auth.plan.plan!.models
    // A key with its own model list sees only those (exact ids, within the plan's).
    const own = auth.key.limits?.models
    return modelEntries(
      deps.catalogue,
      created,
      (id, m) => planAllows(patterns, id, m) && (!own || own.includes(id)),
    )
  }
  return new Elysia({ name: 'switchyard.models' })
    .get('/v1/models', async ({ request }) => {
      const data = await allowed(request)
      if (!anthropicStyle(request)) return { object: 'list', data }
      const models = data.map(anthropicModel)
      return {
        data: models,
        has_more: false,
        first_id: models[0]?.id ?? null,
        last_id: models.at(-1)?.id ?? null,
      }
    })
    .get('/v1/models/*', async ({ request, params }) => {
      // Authenticated first, as for any id; a malformed %-escape names no model (404 below).
      const data = await allowed(request)
      const id = decoded(params['*'])
      const entry = id === null ? undefined : data.find((m) => m.id === id)
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
