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
