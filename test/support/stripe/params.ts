/**
 * Each endpoint's parameters, checked as Stripe checks them: a parameter the endpoint does not
 * define is `parameter_unknown` (with `param` in bracket form, e.g. `payment_method_data[foo]`), a
 * required one left out is `parameter_missing`, and strings become integers, booleans or enum
 * members here, so handlers see typed values.
 */
import { invalidRequest, parameterMissing, parameterUnknown } from "./errors.ts"
import type { FormHash, FormValue } from "./form.ts"

export type Spec =
  | { readonly kind: "string" }
  | { readonly kind: "integer" }
  | { readonly kind: "boolean" }
  | { readonly kind: "enum"; readonly values: ReadonlyArray<string> }
  | { readonly kind: "metadata" }
  | { readonly kind: "array"; readonly of: Spec }
  | { readonly kind: "hash"; readonly fields: Fields }

export interface Field {
  readonly spec: Spec
  readonly required: boolean
}
export type Fields = Readonly<Record<string, Field>>

export const string: Spec = { kind: "string" }
export const integer: Spec = { kind: "integer" }
export const boolean: Spec = { kind: "boolean" }
export const metadata: Spec = { kind: "metadata" }
export const oneOf = (...values: ReadonlyArray<string>): Spec => ({ kind: "enum", values })
export const arrayOf = (of: Spec): Spec => ({ kind: "array", of })
export const hash = (fields: Fields): Spec => ({ kind: "hash", fields })
export const required = (spec: Spec): Field => ({ spec, required: true })
export const optional = (spec: Spec): Field => ({ spec, required: false })

/** Every endpoint takes `expand`. */
export const withExpand = (fields: Fields): Fields => ({ ...fields, expand: optional(arrayOf(string)) })

const name = (prefix: string, key: string): string => (prefix === "" ? key : `${prefix}[${key}]`)

// Metadata limits from the reference ("Metadata"): 50 keys, keys up to 40 characters, values up to 500.
const checkMetadata = (param: string, value: FormValue): Record<string, string> => {
  if (value === "") return {}
  if (typeof value === "string" || Array.isArray(value)) throw invalidRequest("Invalid hash", { param })
  const entries = Object.entries(value as FormHash)
  if (entries.length > 50) throw invalidRequest("Metadata can have at most 50 keys.", { param })
  const result: Record<string, string> = {}
  for (const [key, item] of entries) {
    if (typeof item !== "string") throw invalidRequest("Invalid value: metadata values must be strings", { param })
    if (key.length > 40) throw invalidRequest("Metadata keys can be at most 40 characters long.", { param })
    if (item.length > 500) throw invalidRequest("Metadata values can be at most 500 characters long.", { param })
    result[key] = item
  }
  return result
}

const check = (spec: Spec, param: string, value: FormValue): unknown => {
  switch (spec.kind) {
    case "string":
      if (typeof value !== "string") throw invalidRequest(`Invalid string: ${JSON.stringify(value)}`, { param })
      return value
    case "integer":
      if (typeof value !== "string" || !/^-?\d+$/.test(value)) {
        throw invalidRequest(`Invalid integer: ${String(value)}`, { code: "parameter_invalid_integer", param })
      }
      return Number(value)
    case "boolean":
      if (value !== "true" && value !== "false") throw invalidRequest(`Invalid boolean: ${String(value)}`, { param })
      return value === "true"
    case "enum":
      if (typeof value !== "string" || !spec.values.includes(value)) {
        throw invalidRequest(`Invalid ${param}: must be one of ${spec.values.join(", ")}`, { param })
      }
      return value
    case "metadata":
      return checkMetadata(param, value)
    case "array": {
      const items = Array.isArray(value) ? value : typeof value === "string" ? null : Object.values(value)
      if (items === null) throw invalidRequest("Invalid array", { param })
      return items.map((item, i) => check(spec.of, `${param}[${i}]`, item))
    }
    case "hash":
      if (typeof value === "string" || Array.isArray(value)) throw invalidRequest("Invalid hash", { param })
      return validate(spec.fields, value as FormHash, param)
  }
}

/** The typed parameters, or the first error Stripe would answer with. */
export const validate = (fields: Fields, input: FormHash, prefix = ""): Record<string, unknown> => {
  for (const key of Object.keys(input)) {
    if (!(key in fields)) throw parameterUnknown(name(prefix, key))
  }
  const result: Record<string, unknown> = {}
  for (const [key, field] of Object.entries(fields)) {
    const value = input[key]
    if (value === undefined) {
      if (field.required) throw parameterMissing(name(prefix, key))
      continue
    }
    if (value === "" && field.required && field.spec.kind !== "metadata") {
      throw invalidRequest(`You passed an empty string for '${name(prefix, key)}'.`, {
        code: "parameter_invalid_empty",
        param: name(prefix, key)
      })
    }
    result[key] = check(field.spec, name(prefix, key), value)
  }
  return result
}
