/** Escaping for server-rendered HTML: every value that is not markup goes through `escapeHtml`. */

const replacements: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  "\"": "&quot;",
  "'": "&#39;"
}

/** An absolute http(s) URL without whitespace: one a page may link or post to (escaped, as every value). */
export const isHttpUrl = (url: string | undefined): url is string => url !== undefined && /^https?:\/\/\S+$/.test(url)

/** Text safe in element content and in quoted attribute values. */
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (char) => replacements[char]!)

/** Markup: what `html` makes (every interpolated value escaped), or markup trusted as it is. */
export class Html {
  constructor(readonly markup: string) {}
  toString(): string {
    return this.markup
  }
}

/** What `html` takes between its literal parts: text is escaped, `Html` kept, nothing-values dropped. */
export type HtmlValue = Html | string | number | boolean | null | undefined | ReadonlyArray<HtmlValue>

const render = (value: HtmlValue): string => {
  if (value instanceof Html) return value.markup
  if (Array.isArray(value)) return value.map(render).join("")
  if (value === null || value === undefined || value === false || value === true) return ""
  return escapeHtml(String(value))
}

/**
 * A template of markup whose interpolations are escaped unless they are `Html` already: escaping
 * is what happens unless a value was made as markup, so a page cannot forget it. `true`, `false`,
 * `null` and `undefined` render nothing (for `${condition && html`…`}`); arrays render each item.
 */
export const html = (literals: TemplateStringsArray, ...values: ReadonlyArray<HtmlValue>): Html =>
  new Html(
    literals.reduce((out, literal, index) => out + literal + (index < values.length ? render(values[index]!) : ""), "")
  )
