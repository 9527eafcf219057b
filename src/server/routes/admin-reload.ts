/**
 * @module
 * `POST /admin/v1/reload`: live reload (DESIGN §13), as `switchyard reload` and SIGHUP do. 200
 * with what changed (or `unchanged`); a file with problems → 422 `config_invalid`, a start-only
 * setting changed → 409 `restart_required`, each message listing every problem with its path (the
 * running config stays). With `--workers N` it reaches every process (cli/workers.ts) before it
 * answers. Behind the admin guard, audited with what changed; the guard takes the serve file's
 * credential here too (`switchyard reload`: cli/serve-file.ts), even with the admin API off.
 */
import { Elysia } from 'elysia'
import { GatewayError } from '../../util/errors.ts'
import { adminGuard } from '../admin-guard.ts'
import { type Deps, reloadAuditChange } from '../deps.ts'
import { NoBody } from '../json-body.ts'
import { NoQuery } from './no-query.ts'

export function adminReloadRoutes(deps: Deps) {
  return new Elysia({ name: 'switchyard.admin.reload', prefix: '/admin/v1' })
    .use(adminGuard(deps, { serveToken: () => deps.reloads.token }))
    .post(
      '/reload',
      async ({ auditChange }) => {
        const r = await deps.reloads.run()
        auditChange({
          target: r.source,
          change: reloadAuditChange(r),
        })
        if (r.outcome !== 'refused') return r
        const lines = r.problems.map((p) => `  ${p.path}: ${p.message}`).join('\n')
        if (r.restart) {
          throw new GatewayError(
            409,
            'restart_required',
            `config ${r.source} not reloaded: these settings take effect only at start (restart the gateway to apply them):\n${lines}`,
            { param: r.problems[0]?.path ?? null },
          )
        }
        throw new GatewayError(
          422,
          'config_invalid',
          `config ${r.source} not reloaded, the running config stays: invalid config ${r.source}:\n${lines}\nFix the listed paths and run \`switchyard config check\` again.`,
          { param: r.problems[0]?.path ?? null },
        )
      },
      { body: NoBody, query: NoQuery },
    )
}
