/**
 * @module
 * The operations the pipeline runs, one line each: a surface names its operation
 * (`operations/operation.ts`), and the conductor (run.ts) asks this table for its part. A new
 * operation is a file here and a line below.
 *
 * @example
 * const op = operationOf(surface) // chatOperation for the chat, messages and responses surfaces
 */
import type { Operation } from '../../operations/operation.ts'
import type { PipelineOperation } from '../operation.ts'
import type { Surface } from '../surface.ts'
import { chatOperation } from './chat.ts'
import { countTokensOperation } from './count-tokens.ts'
import { embeddingsOperation } from './embeddings.ts'

export const OPERATIONS: Readonly<Record<Operation, PipelineOperation>> = {
  chat: chatOperation,
  embeddings: embeddingsOperation,
  count_tokens: countTokensOperation,
}

/** The pipeline's part of the operation `surface` serves. */
export function operationOf(surface: Surface<unknown>): PipelineOperation {
  return OPERATIONS[surface.operation]
}
