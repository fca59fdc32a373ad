/** The first problem of a decode failure, described from the schema alone: no input value travels back in an error. */
import { ParseResult, SchemaAST as AST } from "effect"
import { toJsonPath } from "./schema-helpers.ts"

export interface SchemaFailure {
  readonly kind: "missing" | "invalid"
  /** The decode path of the offending field (its JSONPath is the error's `param`). */
  readonly path: ReadonlyArray<PropertyKey>
  /** The field `expectation` speaks of: `path`, or the union when none of its shapes' required keys is present. */
  readonly subject: ReadonlyArray<PropertyKey>
  readonly expectation: string
}

/** A message annotation's text; a message function that throws or returns something else is ignored. */
const annotatedMessage = (ast: AST.AST, issue: ParseResult.ParseIssue): string | undefined => {
  const annotation = AST.getMessageAnnotation(ast)
  if (annotation._tag === "None") return undefined
  try {
    const out = annotation.value(issue)
    if (typeof out === "string") return out
    if (typeof out === "object" && out !== null && "message" in out && typeof out.message === "string") {
      return out.message
    }
  } catch {
    // ignored: the structural description below applies
  }
  return undefined
}

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

/** A refinement's expectation: its identifier, else its description, else what it refines. */
const describeRefinement = (ast: AST.Refinement): string => {
  const id = AST.getIdentifierAnnotation(ast)
  if (id._tag === "Some") return `must be ${article(id.value)}`
  const description = AST.getDescriptionAnnotation(ast)
  return description._tag === "Some" ? `must be ${description.value}` : describeExpected(ast.from)
}

/** The message a filter of ours returned as its verdict (a string in place of `false`). */
const filterMessage = (issue: ParseResult.Refinement): string | undefined =>
  issue.kind === "Predicate" && issue.issue._tag === "Type" && typeof issue.issue.message === "string"
    ? issue.issue.message
    : undefined

const appendPath = (path: ReadonlyArray<PropertyKey>, segment: ParseResult.Path): ReadonlyArray<PropertyKey> =>
  Array.isArray(segment) ? [...path, ...segment] : [...path, segment as PropertyKey]

const failure = (
  kind: SchemaFailure["kind"],
  path: ReadonlyArray<PropertyKey>,
  expectation: string
): SchemaFailure => ({
  kind,
  path,
  subject: path,
  expectation
})

const requiredKeys = (shape: AST.TypeLiteral): ReadonlyArray<PropertyKey> =>
  shape.propertySignatures.filter((property) => !property.isOptional).map((property) => property.name)

const objectShapesOf = (ast: AST.AST): ReadonlyArray<AST.TypeLiteral> | undefined =>
  AST.isUnion(ast) && ast.types.every((member) => AST.isTypeLiteral(member) && requiredKeys(member).length > 0)
    ? (ast.types as ReadonlyArray<AST.TypeLiteral>)
    : undefined

/** Of a union of object shapes, the one the value's required keys point to (its keys are read, never its values). */
const chooseShape = (
  issue: ParseResult.Composite,
  shapes: ReadonlyArray<AST.TypeLiteral>,
  path: ReadonlyArray<PropertyKey>
): ParseResult.ParseIssue | SchemaFailure => {
  const actual = issue.actual
  if (typeof actual !== "object" || actual === null) return failure("invalid", path, "must be an object")
  const meant = shapes.find((shape) => requiredKeys(shape).some((key) => key in actual))
  if (meant === undefined) {
    const alternatives = shapes.map((shape) => requiredKeys(shape).map(String).join(" and ")).join(", or ")
    return {
      kind: "missing",
      path: [...path, requiredKeys(shapes[0]!)[0]!],
      subject: path,
      expectation: `must have ${alternatives}.`
    }
  }
  const issues: ReadonlyArray<ParseResult.ParseIssue> = Array.isArray(issue.issues)
    ? issue.issues
    : [issue.issues as ParseResult.ParseIssue]
  return issues.find((member) => "ast" in member && member.ast === meant) ??
    failure("invalid", path, describeExpected(meant))
}

const isSchemaFailure = (value: ParseResult.ParseIssue | SchemaFailure): value is SchemaFailure =>
  "expectation" in value

/** Walks to the first leaf of the issue tree (decoding uses `errors: "first"`, so usually one). */
export const firstSchemaFailure = (error: ParseResult.ParseError | ParseResult.ParseIssue): SchemaFailure => {
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
          return failure("invalid", path, describeExpected(issue.ast))
        }
        const shapes = objectShapesOf(issue.ast)
        if (shapes !== undefined) {
          const chosen = chooseShape(issue, shapes, path)
          if (isSchemaFailure(chosen)) return chosen
          issue = chosen
          continue
        }
        const next: ParseResult.ParseIssue | undefined = Array.isArray(issue.issues)
          ? issue.issues[0]
          : (issue.issues as ParseResult.ParseIssue)
        if (next === undefined) return failure("invalid", path, describeExpected(issue.ast))
        issue = next
        continue
      }
      case "Refinement": {
        if (issue.kind === "From") {
          issue = issue.issue
          continue
        }
        return failure(
          "invalid",
          path,
          annotatedMessage(issue.ast, issue) ?? filterMessage(issue) ?? describeRefinement(issue.ast)
        )
      }
      case "Transformation":
        issue = issue.issue
        continue
      case "Missing":
        return failure("missing", path, "is required")
      case "Type":
        return failure("invalid", path, annotatedMessage(issue.ast, issue) ?? describeExpected(issue.ast))
      case "Unexpected":
        return failure("invalid", path, "is not allowed")
      case "Forbidden":
        return failure("invalid", path, "is invalid")
    }
  }
}

/** The first failure with its JSONPath (rooted at `root`) and the sentence "<JSONPath> <expectation>". */
export interface JsonPathFailure {
  readonly kind: SchemaFailure["kind"]
  readonly param: string
  readonly message: string
}

export const firstFailureAtJsonPath = (
  error: ParseResult.ParseError | ParseResult.ParseIssue,
  root = "$"
): JsonPathFailure => {
  const first = firstSchemaFailure(error)
  const param = toJsonPath(first.path, root)
  return { kind: first.kind, param, message: `${toJsonPath(first.subject, root)} ${first.expectation}` }
}
