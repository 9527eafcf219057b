/**
 * @module
 * The cross-checks of DESIGN §10's settings that a schema cannot state: every fallback names a
 * configured model of the same type (not the model itself), an embedding model and its fallbacks
 * declare the same `dimensions`, no pool key is empty, and the backoff cap is not below its first
 * step. Each problem carries its path.
 *
 * Embeddings: a fallback answering vectors of another length would change, mid-stream, the
 * vectors a client stores (a vector database refuses them, or mixes two spaces). Only declared
 * lengths can be compared before a request, so an embedding model with fallbacks and each of them
 * must declare one, the same; then a request's own `dimensions` fits all of them or none.
 */
import { modelType } from '../operations/operation.ts'
import { type Intact, list, type Problem } from './intact.ts'
import type { RawConfig } from './schema.ts'

/** `secrets`: whether provider keys must be set (serve, config check). Reads only what `intact` passes. */
export function checkResilience(raw: RawConfig, problems: Problem[], secrets: boolean, intact: Intact): void {
  // Every model the file names, valid or not (its own problems are reported where it is); a type
  // only where the schema passed it.
  const types = new Map<string, string | undefined>()
  /** An embedding model's declared `dimensions`: a number, none (`null`), or unknown (`undefined`: its schema failed). */
  const dimensions = new Map<string, number | null | undefined>()
  list(raw.providers).forEach((p, i) => {
    list(p?.models).forEach((m, j) => {
      if (typeof p.prefix !== 'string' || typeof m?.name !== 'string') return
      const id = `${p.prefix}/${m.name}`
      types.set(id, intact(`/providers/${i}/models/${j}/type`) ? modelType(m) : undefined)
      dimensions.set(
        id,
        intact(`/providers/${i}/models/${j}/dimensions`) ? (m.dimensions ?? null) : undefined,
      )
    })
  })
  list(raw.providers).forEach((p, i) => {
    const at = `/providers/${i}`
    list(p?.models).forEach((m, j) => {
      if (!intact(`${at}/models/${j}/fallbacks`)) return
      const own = intact(`${at}/models/${j}/type`) ? modelType(m) : undefined
      m.fallbacks?.forEach((id, k) => {
        const path = `${at}/models/${j}/fallbacks/${k}`
        const type = types.get(id)
        if (id === `${p.prefix}/${m.name}`)
          problems.push({ path, message: `a model cannot fall back to itself ('${id}')` })
        else if (!types.has(id))
          problems.push({
            path,
            message: `no configured model '${id}' (a fallback is the prefix/name of a model in this file)`,
          })
        else if (own && type && type !== own)
          problems.push({
            path,
            message: `'${id}' is ${an(type)} model; ${an(own)} model falls back to ${own} models only`,
          })
        else if (own === 'embedding' && type === 'embedding') {
          const message = sameDimensions(id, dimensions.get(`${p.prefix}/${m.name}`), dimensions.get(id))
          if (message) problems.push({ path, message })
        }
      })
    })
    if (secrets) {
      list(p?.keys).forEach((k, n) => {
        if (intact(`${at}/keys/${n}/api_key`) && k.api_key === '')
          problems.push({
            path: `${at}/keys/${n}/api_key`,
            message: 'empty API key (set the environment variable it names)',
          })
      })
    }
    const r = intact(`${at}/retry/backoff_ms`) && intact(`${at}/retry/max_backoff_ms`) ? p.retry : undefined
    if (r?.backoff_ms !== undefined && r.max_backoff_ms !== undefined && r.max_backoff_ms < r.backoff_ms) {
      problems.push({
        path: `${at}/retry/max_backoff_ms`,
        message: `${r.max_backoff_ms} is below backoff_ms (${r.backoff_ms})`,
      })
    }
  })
}

/** What is wrong with embedding fallback `id`'s declared length against its model's; null when nothing (or when a schema problem hides it). */
function sameDimensions(
  id: string,
  own: number | null | undefined,
  theirs: number | null | undefined,
): string | null {
  const rule =
    'an embedding model with fallbacks and each of its fallbacks declare dimensions, the same for all'
  if (own === undefined || theirs === undefined) return null
  if (own === null) return `this model declares no dimensions: ${rule}`
  if (theirs === null) return `'${id}' declares no dimensions: ${rule}`
  if (own !== theirs)
    return `'${id}' makes vectors of ${theirs} dimensions, this model ${own}: an embedding model's fallbacks must make vectors of its own length (declare the same dimensions)`
  return null
}

const an = (type: string) => (type === 'embedding' ? 'an embedding' : `a ${type}`)
