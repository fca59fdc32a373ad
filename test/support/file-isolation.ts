/**
 * Runs before each test file (`setupFiles` in vitest.config.ts). A worker runs many files in one
 * process (`isolate: false`), so whatever a file changes in a module it shares with the files
 * after it has to be put back here.
 *
 * - `@effect/vitest`'s `layer(...)(name, (it) => …)` hands its callback the package's own `it`
 *   with `effect`, `scoped`, `layer`, `prop` and `flakyTest` replaced by ones that run in that
 *   layer (0.30.0 assigns them onto the shared object): after a file whose last `layer` is a
 *   PostgreSQL one, every `it.effect` of the next file would build that database. The methods as
 *   the package made them are kept from the worker's first file and put back before each file.
 */
import { it } from "@effect/vitest"

const methods = ["effect", "scoped", "live", "scopedLive", "layer", "prop", "flakyTest"] as const
type Methods = Pick<typeof it, (typeof methods)[number]>

const key = Symbol.for("acp-test/@effect/vitest it methods")
const store = globalThis as { [key]?: Methods }
const original: Methods = store[key] ??= Object.fromEntries(methods.map((name) => [name, it[name]])) as Methods
Object.assign(it, original)
