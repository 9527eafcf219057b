/**
 * @module
 * The query schema of an admin route that takes no query parameter: one sent anyway is a 400
 * naming it, as the routes that take some refuse the others (`?limit=` on a route without pages
 * must not look like it worked).
 */
import { t } from 'elysia'

export const NoQuery = t.Object({}, { additionalProperties: false })

/** A page of a list: the previous page's `next_cursor`, and how many rows (see accounts/list-page.ts). */
export const PageParam = t.Optional(t.String({ maxLength: 200 }))
