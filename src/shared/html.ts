/** Escaping for server-rendered HTML: every value that is not markup goes through `escapeHtml`. */

const replacements: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  "\"": "&quot;",
  "'": "&#39;"
}

export const isHttpUrl = (url: string | undefined): url is string => url !== undefined && /^https?:\/\/\S+$/.test(url)

/** Text safe in element content and in quoted attribute values. */
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (char) => replacements[char]!)

export class Html {
  constructor(readonly markup: string) {}
  toString(): string {
    return this.markup
  }
}

export type HtmlValue = Html | string | number | boolean | null | undefined | ReadonlyArray<HtmlValue>

const render = (value: HtmlValue): string => {
  if (value instanceof Html) return value.markup
  if (Array.isArray(value)) return value.map(render).join("")
  if (value === null || value === undefined || value === false || value === true) return ""
  return escapeHtml(String(value))
}

/** Markup with every interpolation escaped unless `Html`; booleans and nullish render nothing, arrays each item. */
export const html = (literals: TemplateStringsArray, ...values: ReadonlyArray<HtmlValue>): Html =>
  new Html(
    literals.reduce((out, literal, index) => out + literal + (index < values.length ? render(values[index]!) : ""), "")
  )
