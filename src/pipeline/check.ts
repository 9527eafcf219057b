/**
 * @module
 * The checks a decoded request passes before admission, the same on every surface: the features
 * it uses against the model's (400 `unsupported_feature` naming the field in the surface's terms),
 * the surface's own limits, then the translation to the canonical request — skipped when the
 * request passes through to a provider of the surface's own wire. A stream request's fallback
 * without `streaming` is not refused for it: it is asked for JSON, served as the stream
 * (operations/chat-routes.ts).
 */

import type { CatalogueEntry } from '../catalogue/entry.ts'
import { checkFeatures } from '../catalogue/features.ts'
import type { Feature } from '../config/schema-providers.ts'
import type { ChatSurface, Translated } from './surface.ts'

export function checkAndTranslate<View>(
  surface: Pick<ChatSurface<View>, 'features' | 'temperature' | 'checkLimits' | 'translate'>,
  view: View,
  entry: CatalogueEntry,
  passThrough: boolean,
  /** A feature the gateway provides for this model itself (a stream served from JSON), not checked. */
  provided?: Feature,
): Translated | null {
  const uses = surface.features(view)
  checkFeatures(
    provided ? uses.filter((u) => u.feature !== provided) : uses,
    surface.temperature(view),
    entry.model,
    entry.id,
  )
  surface.checkLimits?.(view, entry)
  return passThrough ? null : surface.translate(view, entry)
}
