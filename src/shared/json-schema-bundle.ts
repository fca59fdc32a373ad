/** A JSON Schema with its `$defs` inlined, for MCP clients, which must get bundled tool schemas; recursion throws. */
type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }

const DROPPED = new Set(["$defs", "$schema", "$id"])

export const bundleJsonSchema = (schema: object): Record<string, unknown> => {
  const root = schema as { readonly $defs?: Record<string, Json> }
  const defs = root.$defs ?? {}
  const inline = (node: Json, path: ReadonlyArray<string>): Json => {
    if (Array.isArray(node)) return node.map((item) => inline(item, path))
    if (node === null || typeof node !== "object") return node
    const object = node as { readonly [key: string]: Json }
    const ref = object["$ref"]
    if (typeof ref === "string") {
      const name = ref.replace(/^#\/\$defs\//, "")
      const definition = defs[name]
      if (definition === undefined || name === ref) throw new Error(`bundleJsonSchema: unresolvable ${ref}`)
      if (path.includes(name)) throw new Error(`bundleJsonSchema: ${name} is recursive`)
      const { $ref: _ref, ...siblings } = object
      return inline({ ...(definition as object), ...siblings }, [...path, name])
    }
    return Object.fromEntries(
      Object.entries(object).filter(([key]) => !DROPPED.has(key)).map(([key, value]) => [key, inline(value, path)])
    )
  }
  return inline(schema as Json, []) as Record<string, unknown>
}
