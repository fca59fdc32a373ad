/**
 * Turns a schema decode failure into the first problem as the API reports it: a JSONPath, whether
 * the field was missing or invalid, and a message that states the expectation only. Messages never
 * echo the input value (card numbers, tokens and the like must not travel back in errors).
 */
import { ParseResult, SchemaAST as AST } from "effect"
import { toJsonPath } from "./schema-helpers.ts"

export interface FirstIssue {
  readonly kind: "missing" | "invalid"
  /** JSONPath of the field, rooted at `$`. */
  readonly param: string
  /** English sentence: the param followed by what was expected. */
  readonly message: string
}

const annotatedMessage = (ast: AST.AST, issue: ParseResult.ParseIssue): string | undefined => {
  const annotation = AST.getMessageAnnotation(ast)
  if (annotation._tag === "None") return undefined
  const out = annotation.value(issue)
  if (typeof out === "string") return out
  if (typeof out === "object" && out !== null && "message" in out && typeof out.message === "string") {
    return out.message
  }
  return undefined
}

/** Schema identifiers in words (`Schema.Int` is identified as "Int"). */
const identifierWords: Record<string, string> = { Int: "integer" }

const article = (identifier: string) => {
  const word = identifierWords[identifier] ?? identifier
  return /^[aeiouAEIOU]/.test(word) ? `an ${word}` : `a ${word}`
}

/** What a schema expects, in words, without looking at the input. */
export const describeExpected = (ast: AST.AST): string => {
  switch (ast._tag) {
    case "StringKeyword":
      return "must be a string"
    case "NumberKeyword":
      return "must be a number"
    case "BooleanKeyword":
      return "must be a boolean"
    case "TypeLiteral":
      return "must be an object"
    case "TupleType":
      return "must be an array"
    case "Literal":
      return `must be ${JSON.stringify(ast.literal)}`
    case "Union": {
      const literals = ast.types.filter(AST.isLiteral)
      if (literals.length === ast.types.length) {
        return `must be one of ${literals.map((l) => JSON.stringify(l.literal)).join(", ")}`
      }
      return "has an unsupported shape"
    }
    case "Refinement": {
      const id = AST.getIdentifierAnnotation(ast)
      if (id._tag === "Some") return `must be ${article(id.value)}`
      return describeExpected(ast.from)
    }
    case "Transformation":
      return describeExpected(ast.from)
    case "Declaration":
    case "Suspend":
    default: {
      const id = AST.getIdentifierAnnotation(ast)
      return id._tag === "Some" ? `must be ${article(id.value)}` : "is invalid"
    }
  }
}

const appendPath = (path: ReadonlyArray<PropertyKey>, segment: ParseResult.Path): ReadonlyArray<PropertyKey> =>
  Array.isArray(segment) ? [...path, ...segment] : [...path, segment as PropertyKey]

/** Walks to the first leaf of the issue tree (decoding uses `errors: "first"`, so usually one). */
export const firstIssue = (error: ParseResult.ParseError | ParseResult.ParseIssue, root = "$"): FirstIssue => {
  let issue: ParseResult.ParseIssue = ParseResult.isParseError(error) ? error.issue : error
  let path: ReadonlyArray<PropertyKey> = []
  for (;;) {
    switch (issue._tag) {
      case "Pointer":
        path = appendPath(path, issue.path)
        issue = issue.issue
        continue
      case "Composite": {
        // A value outside a set of literals: name the whole set, not the first literal tried.
        if (AST.isUnion(issue.ast) && issue.ast.types.every(AST.isLiteral)) {
          return leaf("invalid", path, root, describeExpected(issue.ast))
        }
        const next: ParseResult.ParseIssue | undefined = Array.isArray(issue.issues)
          ? issue.issues[0]
          : (issue.issues as ParseResult.ParseIssue)
        if (next === undefined) return leaf("invalid", path, root, describeExpected(issue.ast))
        issue = next
        continue
      }
      case "Refinement": {
        if (issue.kind === "From") {
          issue = issue.issue
          continue
        }
        return leaf("invalid", path, root, annotatedMessage(issue.ast, issue) ?? describeExpected(issue.ast))
      }
      case "Transformation":
        issue = issue.issue
        continue
      case "Missing":
        return leaf("missing", path, root, "is required")
      case "Type":
        return leaf("invalid", path, root, annotatedMessage(issue.ast, issue) ?? describeExpected(issue.ast))
      case "Unexpected":
        return leaf("invalid", path, root, "is not allowed")
      case "Forbidden":
        return leaf("invalid", path, root, "is invalid")
    }
  }
}

const leaf = (
  kind: FirstIssue["kind"],
  path: ReadonlyArray<PropertyKey>,
  root: string,
  expectation: string
): FirstIssue => {
  const param = toJsonPath(path, root)
  return { kind, param, message: `${param} ${expectation}` }
}
