/**
 * The first problem of a schema decode failure, as every API reports it: where (the decode path,
 * rendered as a JSONPath), whether the field was missing or invalid, and what was expected. The
 * expectation comes from the schema alone (message annotations, identifiers, AST kinds); the
 * input value is never read into it, so card numbers, tokens and the like never travel back in an
 * error. Each API renders this in its own error object.
 */
import { ParseResult, SchemaAST as AST } from "effect"
import { toJsonPath } from "./schema-helpers.ts"

export interface SchemaFailure {
  readonly kind: "missing" | "invalid"
  /** The decode path of the offending field (its JSONPath is the error's `param`). */
  readonly path: ReadonlyArray<PropertyKey>
  /**
   * The field `expectation` speaks of: `path`, except for a union of object shapes none of whose
   * required keys is present, where it is the union and `path` the first key it needs.
   */
  readonly subject: ReadonlyArray<PropertyKey>
  /** English phrase: what the field must be, e.g. "must be 12 to 19 digits" or "is required". */
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

/**
 * What a refinement that failed its predicate expects: its identifier (`Schema.Int`: "an integer"),
 * else its description (the library's filters describe themselves: "a string at most 64
 * character(s) long", "a positive number"), else what it refines. A value of the right type that
 * breaks the rule is not told it "must be a string".
 */
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

/** The members of a union when each is an object shape with required keys, else undefined. */
const objectShapesOf = (ast: AST.AST): ReadonlyArray<AST.TypeLiteral> | undefined =>
  AST.isUnion(ast) && ast.types.every((member) => AST.isTypeLiteral(member) && requiredKeys(member).length > 0)
    ? (ast.types as ReadonlyArray<AST.TypeLiteral>)
    : undefined

/**
 * A union of object shapes (e.g. the two forms of `payment_data`): the required keys the value has
 * choose the shape the client meant (the first shape with any of them), so the failure names a
 * field of that shape; with none of them, the first key of the first shape is missing. Only the
 * value's keys are looked at, never its values.
 */
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
