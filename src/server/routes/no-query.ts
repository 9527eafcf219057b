/**
 * @module
 * The admin routes' query schemas. `NoQuery`: a route that takes no query parameter; one sent
 * anyway is a 400 naming it, as the routes that take some refuse the others (`?limit=` on a route
 * without pages must not look like it worked). `QueryText`: one parameter's value, bounded.
 */
import { t } from 'elysia'

export const NoQuery = t.Object({}, { additionalProperties: false })

/** A short text parameter: a query's (a filter, a time, a page's `cursor` and `limit`; see accounts/list-page.ts), or a small body's (a session selector's `key`, `kind`). */
export const QueryText = t.Optional(t.String({ maxLength: 200 }))
