/** @module Configuration: schema, loading and validation of `switchyard.yaml`. */
export {
  type Config,
  ConfigError,
  type ConfigProblem,
  loadConfigFile,
  parseConfig,
  type SuspensionPolicy,
} from './load.ts'
export * from './schema.ts'
