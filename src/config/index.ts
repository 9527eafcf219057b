/** @module Configuration: schema, loading and validation of `switchyard.yaml`. */
export { ConfigError, type ConfigProblem } from './error.ts'
export {
  type Config,
  type LoadOptions,
  loadConfigFile,
  parseConfig,
  type SuspensionPolicy,
} from './load.ts'
export * from './schema.ts'
export * from './schema-aliases.ts'
export * from './schema-providers.ts'
export * from './schema-signals.ts'
export { MAX_DAYS, MAX_TIMER_MS } from './schema-units.ts'
export type { AlertsConfig, TelemetryConfig, WebhookConfig } from './signals.ts'
