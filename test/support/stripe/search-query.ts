/**
 * The part of Stripe's search query language ("Search query language") the fake understands:
 * clauses `field:value` (exact match; `-` negates), `field>value`, `<`, `>=`, `<=` on numbers,
 * `metadata['key']:'value'`, joined all by `AND` or all by `OR` (the language does not allow
 * both in one query). Fields are those PaymentIntent search lists: amount, created, currency,
 * customer, metadata, status. Anything else is an invalid query, as it is for Stripe.
 */
import { invalidRequest } from "./errors.ts"

type Operator = ":" | ">" | "<" | ">=" | "<="

interface Clause {
  readonly negated: boolean
  readonly field: string
  /** Set for `metadata['key']`. */
  readonly metadataKey: string | undefined
  readonly operator: Operator
  readonly value: string
}

export type Lookup = (field: string, metadataKey: string | undefined) => string | number | null | undefined

const CLAUSE = /^(-)?(metadata\[(?:'([^']*)'|"([^"]*)")\]|[a-z_]+)(>=|<=|:|>|<)(?:'([^']*)'|"([^"]*)"|([^\s'"]+))$/

const FIELDS = ["amount", "created", "currency", "customer", "metadata", "status"]
const NUMERIC = ["amount", "created"]

const invalid = (query: string, why: string) =>
  invalidRequest(`Invalid query: ${why} (query: ${query})`, { param: "query" })

const parseClause = (query: string, text: string): Clause => {
  const match = CLAUSE.exec(text)
  if (match === null) throw invalid(query, `cannot parse '${text}'`)
  const [, negated, fieldText, singleKey, doubleKey, operator, single, double, bare] = match
  const metadataKey = singleKey ?? doubleKey
  const field = metadataKey === undefined ? fieldText! : "metadata"
  if (!FIELDS.includes(field) || (field === "metadata" && metadataKey === undefined)) {
    throw invalid(query, `'${fieldText}' is not a searchable field of payment_intents`)
  }
  if (operator !== ":" && !NUMERIC.includes(field)) throw invalid(query, `'${operator}' needs a numeric field`)
  return {
    negated: negated === "-",
    field,
    metadataKey,
    operator: operator as Operator,
    value: single ?? double ?? bare!
  }
}

const holds = (clause: Clause, lookup: Lookup): boolean => {
  const actual = lookup(clause.field, clause.metadataKey)
  let result: boolean
  if (actual === null || actual === undefined) {
    result = false
  } else if (clause.operator === ":") {
    result = String(actual) === clause.value
  } else {
    const left = Number(actual)
    const right = Number(clause.value)
    result = clause.operator === ">" ?
      left > right
      : clause.operator === "<" ?
      left < right
      : clause.operator === ">=" ?
      left >= right
      : left <= right
  }
  return clause.negated ? !result : result
}

/** A predicate for `query`, or Stripe's 400 for a query it cannot run. */
export const parseQuery = (query: string): (lookup: Lookup) => boolean => {
  const trimmed = query.trim()
  if (trimmed === "") throw invalid(query, "the query is empty")
  const hasAnd = / AND /.test(trimmed)
  const hasOr = / OR /.test(trimmed)
  if (hasAnd && hasOr) throw invalid(query, "AND and OR cannot be combined in one query")
  const clauses = trimmed.split(hasOr ? / OR / : / AND /).map((text) => parseClause(query, text.trim()))
  return (lookup) => hasOr ? clauses.some((c) => holds(c, lookup)) : clauses.every((c) => holds(c, lookup))
}
