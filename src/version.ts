/** @module The version `switchyard --version` prints, from package.json (bundled into the binary). */
import pkg from '../package.json' with { type: 'json' }

export const VERSION: string = pkg.version
