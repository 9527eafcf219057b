/**
 * @module
 * The checks a decoded request passes before admission, the same on every surface: the features
 * it uses against the model's (400 `unsupported_feature` naming the field in the surface's terms),
 * the surface's own limits, then the translation to the canonical request — skipped when the
 * request passes through to a provider of the surface's own wire.
 */

import type { CatalogueEntry } from '../catalogue/entry.ts'
import { checkFeatures } from '../catalogue/features.ts'
import type { ChatSurface, Translated } from './surface.ts'

export function checkAndTranslate<View>(
  surface: Pick<ChatSurface<View>, 'features' | 'temperature' | 'checkLimits' | 'translate'>,
  view: View,
  entry: CatalogueEntry,
  passThrough: boolean,
): Translated | null {
  checkFeatures(surface.features(view), surface.temperature(view), entry.model, entry.id)
  surface.checkLimits?.(view, entry)
  return passThrough ? null : surface.translate(view, entry)
}
