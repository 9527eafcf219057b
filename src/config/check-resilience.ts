/**
 * @module
 * The cross-checks of DESIGN §10's settings that a schema cannot state: every fallback names a
 * configured model of the same type (not the model itself), no pool key is empty, and the backoff
 * cap is not below its first step. Each problem carries its path.
 */
import { modelType } from '../operations/operation.ts'
import { type Intact, list, type Problem } from './intact.ts'
import type { RawConfig } from './schema.ts'

/** `secrets`: whether provider keys must be set (serve, config check). Reads only what `intact` passes. */
export function checkResilience(raw: RawConfig, problems: Problem[], secrets: boolean, intact: Intact): void {
  // Every model the file names, valid or not (its own problems are reported where it is); a type
  // only where the schema passed it.
  const types = new Map<string, string | undefined>()
  list(raw.providers).forEach((p, i) => {
    list(p?.models).forEach((m, j) => {
      if (typeof p.prefix !== 'string' || typeof m?.name !== 'string') return
      types.set(
        `${p.prefix}/${m.name}`,
        intact(`/providers/${i}/models/${j}/type`) ? modelType(m) : undefined,
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

const an = (type: string) => (type === 'embedding' ? 'an embedding' : `a ${type}`)
