/**
 * @module
 * The error for a message role an adapter does not translate. Validation already refuses unknown
 * roles; this keeps the converters total should the two ever disagree.
 */
import { GatewayError } from '../../util/errors.ts'
import { clip } from '../../util/text.ts'

/**
 * @example
 * throw unknownRoleError('critic', 'messages[3]') // 400 invalid_value, param 'messages[3].role'
 */
export function unknownRoleError(role: unknown, param: string): GatewayError {
  return new GatewayError(400, 'invalid_value', `${param}.role '${clip(String(role))}' is not supported.`, {
    param: `${param}.role`,
  })
}
