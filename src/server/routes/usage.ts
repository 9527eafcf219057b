/** @module `GET /v1/usage`: answers for any existing key, enabled or not. */
import { Elysia } from 'elysia'
import { usageReport } from '../../accounts/usage-report.ts'
import { authenticate } from '../auth.ts'
import type { Deps } from '../deps.ts'

export function usageRoutes(deps: Deps) {
  return new Elysia({ name: 'switchyard.usage' }).get('/v1/usage', async ({ request }) => {
    const auth = await authenticate(deps, request.headers.get('authorization'), true)
    return usageReport(deps, auth.account, auth.key)
  })
}
