/** @module Configuration: schema, loading and validation of `switchyard.yaml`. */
export {
  type Config,
  ConfigError,
  type ConfigProblem,
  type LoadOptions,
  loadConfigFile,
  parseConfig,
  type SuspensionPolicy,
} from './load.ts'
export * from './schema.ts'
