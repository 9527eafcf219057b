/** Files imported `with { type: 'text' }` (embedded into the binary as strings). */
declare module '*.yaml' {
  const text: string
  export default text
}
