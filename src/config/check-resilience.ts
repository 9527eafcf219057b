/**
 * @module
 * The cross-checks of DESIGN §10's settings that a schema cannot state: every fallback names a
 * configured model of the same type (not the model itself), no pool key is empty, and the backoff
 * cap is not below its first step. Each problem carries its path.
 */
import { modelType } from '../operations/operation.ts'
import type { RawConfig } from './schema.ts'

interface Problem {
  path: string
  message: string
}

/** `secrets`: whether provider keys must be set (serve, config check). */
export function checkResilience(raw: RawConfig, problems: Problem[], secrets: boolean): void {
  const types = new Map<string, string>(
    raw.providers.flatMap((p) => p.models.map((m) => [`${p.prefix}/${m.name}`, modelType(m)] as const)),
  )
  raw.providers.forEach((p, i) => {
    const at = `/providers/${i}`
    p.models.forEach((m, j) => {
      m.fallbacks?.forEach((id, k) => {
        const path = `${at}/models/${j}/fallbacks/${k}`
        if (id === `${p.prefix}/${m.name}`)
          problems.push({ path, message: `a model cannot fall back to itself ('${id}')` })
        else if (!types.has(id))
          problems.push({
            path,
            message: `no configured model '${id}' (a fallback is the prefix/name of a model in this file)`,
          })
        else if (types.get(id) !== modelType(m))
          problems.push({
            path,
            message: `'${id}' is ${an(types.get(id)!)} model; ${an(modelType(m))} model falls back to ${modelType(m)} models only`,
          })
      })
    })
    if (secrets) {
      p.keys?.forEach((k, n) => {
        if (k.api_key === '')
          problems.push({
            path: `${at}/keys/${n}/api_key`,
            message: 'empty API key (set the environment variable it names)',
          })
      })
    }
    const r = p.retry
    if (r?.backoff_ms !== undefined && r.max_backoff_ms !== undefined && r.max_backoff_ms < r.backoff_ms) {
      problems.push({
        path: `${at}/retry/max_backoff_ms`,
        message: `${r.max_backoff_ms} is below backoff_ms (${r.backoff_ms})`,
      })
    }
  })
}

const an = (type: string) => (type === 'embedding' ? 'an embedding' : `a ${type}`)
