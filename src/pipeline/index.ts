/**
 * @module
 * The framework-free request pipeline and the `Surface` interface a wire protocol implements to
 * run on it (see `surface.ts`).
 */
export { callProvider, type Finish } from './call.ts'
export { toGatewayError } from './errors.ts'
export { Pipeline, type ServerHandle } from './run.ts'
export { storeFailure } from './store-errors.ts'
export type { StreamEncoder, StreamOutcome } from './stream-encoder.ts'
export { type WriteStreamOptions, type WriteStreamResult, writeStream } from './stream-writer.ts'
export type {
  Decoded,
  EncodeContext,
  Forwarding,
  ForwardRequest,
  RawEvent,
  Surface,
  SurfaceName,
  Translated,
} from './surface.ts'
