/**
 * @module
 * A model's temperature range (`temperature: {min, max}` in the config, else OpenAI's 0–2) and the
 * default of 1, clamped into that range so the default never breaks a model that allows less.
 */
import type { ModelConfig } from '../config/schema.ts'
import { GatewayError } from '../util/errors.ts'

export const DEFAULT_TEMPERATURE = 1

export function temperatureRange(model: ModelConfig): { min: number; max: number } {
  return model.temperature ?? { min: 0, max: 2 }
}

/** The temperature sent when the client gives none. */
export function defaultTemperature(model: ModelConfig): number {
  const { min, max } = temperatureRange(model)
  return Math.min(max, Math.max(min, DEFAULT_TEMPERATURE))
}

/** 400 `unsupported_feature` (param `temperature`) when a given temperature is outside the model's range. */
export function checkTemperature(
  temperature: number | null | undefined,
  model: ModelConfig,
  modelId: string,
): void {
  if (temperature === null || temperature === undefined) return
  const { min, max } = temperatureRange(model)
  if (temperature >= min && temperature <= max) return
  throw new GatewayError(
    400,
    'unsupported_feature',
    `The model "${modelId}" accepts a temperature from ${min} to ${max}; got ${temperature}. Send a temperature in that range, leave it out, or choose another model (GET /v1/models).`,
    { param: 'temperature' },
  )
}
