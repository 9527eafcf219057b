/**
 * @module
 * The response for a store that cannot answer: the store's own converter (store/errors.ts).
 */
export { toGatewayError as storeFailure } from '../store/errors.ts'
