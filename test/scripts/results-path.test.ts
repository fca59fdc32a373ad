import { describe, expect, it } from "@effect/vitest"
import { join } from "node:path"
import { freeResultsBase } from "../../scripts/lib/results-path.ts"

const takenOf = (names: ReadonlyArray<string>) => {
  const taken = new Set(names.map((name) => join("bench/results", name)))
  return (path: string) => taken.has(path)
}

describe("the results files of a run", () => {
  it("take the day's name when no run of the day wrote it", () => {
    expect(freeResultsBase("bench/results", "2026-11-28-vm", takenOf(["2026-11-27-vm.md"])))
      .toBe(join("bench/results", "2026-11-28-vm"))
  })

  it("never take the name of an earlier run's files, whichever of the two it left", () => {
    expect(freeResultsBase("bench/results", "2026-11-28-vm", takenOf(["2026-11-28-vm.md", "2026-11-28-vm.json"])))
      .toBe(join("bench/results", "2026-11-28-vm-2"))
    expect(freeResultsBase("bench/results", "2026-11-28-vm-soak", takenOf(["2026-11-28-vm-soak.json"])))
      .toBe(join("bench/results", "2026-11-28-vm-soak-2"))
    expect(
      freeResultsBase(
        "bench/results",
        "2026-11-28-vm",
        takenOf(["2026-11-28-vm.md", "2026-11-28-vm-2.md", "2026-11-28-vm-2.json", "2026-11-28-vm-3.json"])
      )
    ).toBe(join("bench/results", "2026-11-28-vm-4"))
  })
})
