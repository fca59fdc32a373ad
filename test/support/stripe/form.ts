/**
 * Stripe's form encoding (`application/x-www-form-urlencoded` with brackets): `metadata[k]=v` is a
 * nested hash, `expand[0]=a` and `expand[]=a` are array items (the SDK sends the indexed form), and
 * every value arrives as a string. Parsing is lossless; types come from the endpoint's parameters.
 */

export type FormValue = string | FormHash | ReadonlyArray<FormValue>
export interface FormHash {
  readonly [key: string]: FormValue
}

/** The body could not be read as a form (a key used both as a value and as a hash). */
export class MalformedForm extends Error {}

const decode = (text: string): string => decodeURIComponent(text.replaceAll("+", " "))

/** `a[b][0]` → `["a", "b", "0"]`; `expand[]` → `["expand", ""]`; a key without brackets stays whole. */
const splitKey = (key: string): Array<string> => {
  const open = key.indexOf("[")
  if (open <= 0 || !key.endsWith("]")) return [key]
  const segments = [key.slice(0, open)]
  for (const part of key.slice(open + 1, -1).split("][")) segments.push(part)
  return segments
}

type Mutable = { [key: string]: string | Mutable }

const assign = (root: Mutable, path: ReadonlyArray<string>, value: string): void => {
  let node = root
  for (let i = 0; i < path.length; i++) {
    // `[]` appends: the next free index of this hash.
    const segment = path[i] === "" ? String(Object.keys(node).length) : path[i]!
    if (i === path.length - 1) {
      if (typeof node[segment] === "object") throw new MalformedForm(`${path.join(".")} is a hash`)
      node[segment] = value
      return
    }
    const next = node[segment] ??= {}
    if (typeof next === "string") throw new MalformedForm(`${path.slice(0, i + 1).join(".")} is a value`)
    node = next
  }
}

/** Hashes whose keys are all 0…n-1 become arrays, in index order. */
const arrays = (value: string | Mutable): FormValue => {
  if (typeof value === "string") return value
  const keys = Object.keys(value)
  const indexed = keys.length > 0 && keys.every((key) => /^\d+$/.test(key))
  if (indexed) {
    const sorted = keys.map(Number).sort((a, b) => a - b)
    if (sorted.every((n, i) => n === i)) return sorted.map((n) => arrays(value[String(n)]!))
  }
  return Object.fromEntries(keys.map((key) => [key, arrays(value[key]!)]))
}

export const parseForm = (body: string): FormHash => {
  const root: Mutable = {}
  for (const pair of body.split("&")) {
    if (pair === "") continue
    const eq = pair.indexOf("=")
    const key = decode(eq < 0 ? pair : pair.slice(0, eq))
    assign(root, splitKey(key), eq < 0 ? "" : decode(pair.slice(eq + 1)))
  }
  return Object.fromEntries(Object.keys(root).map((key) => [key, arrays(root[key]!)]))
}
