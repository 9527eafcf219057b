/** Files imported `with { type: 'text' }` (embedded into the binary as strings). */
declare module '*.yaml' {
  const text: string
  export default text
}

/** Files imported `with { type: 'file' }`: their path (inside the binary, a `/$bunfs/` one). */
declare module '*.bin' {
  const path: string
  export default path
}
