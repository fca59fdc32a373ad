/** Where a run's results files go (no side effects: any script may import it). */
import { join } from "node:path"

/**
 * The path, without extension, of a run's `.md` and `.json` in `dir`: `name` (`<date>-<host>` and
 * the script's suffix), or `name-2`, `name-3`, … when an earlier run of the day took it, so that a
 * second run never overwrites the files of the first (which a results table may link to).
 */
export const freeResultsBase = (dir: string, name: string, taken: (path: string) => boolean): string => {
  for (let n = 1;; n++) {
    const base = join(dir, n === 1 ? name : `${name}-${n}`)
    if (!taken(`${base}.md`) && !taken(`${base}.json`)) return base
  }
}
