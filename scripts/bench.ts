/**
 * The benchmark: `npm run bench -- --mode <mode> [options]` (`npm run bench -- --help` lists the
 * modes; `npm run bench:against` is the mode `against`, `npm run soak` the mode `soak`). What each
 * mode runs and its defaults: `MODES` in `scripts/lib/bench-setup.ts`, with every option; the
 * method and the goals: docs/performance.md.
 *
 * Every mode keeps to the same method: the server under test alone on core 0 and the load
 * generator, the agents and PostgreSQL on the other cores (`affinity.ts`; `--no-pin` turns it
 * off, `workers` and `soak` need every core), a warm-up before anything is measured, each figure
 * the median of `--rounds` runs with their range, a comparison between two servers measured in
 * back-to-back pairs in one invocation, and the results written to
 * bench/results/<date>-<host>[-<mode>].{md,json} (`-2`, `-3`, … after the day's first run).
 */
import { benchAgainst } from "./lib/bench-against.ts"
import { type ModeName, modeName, runMain } from "./lib/bench-setup.ts"
import { benchSoak } from "./lib/bench-soak.ts"
import { benchSteps } from "./lib/bench-steps.ts"
import { benchTargets } from "./lib/bench-targets.ts"
import { benchUcp } from "./lib/bench-ucp.ts"
import { benchWorkers } from "./lib/bench-workers.ts"

const run: Record<ModeName, () => Promise<void>> = {
  targets: benchTargets,
  pairs: benchTargets,
  flow: benchTargets,
  embedded: benchTargets,
  workers: benchWorkers,
  steps: benchSteps,
  against: benchAgainst,
  ucp: benchUcp,
  soak: benchSoak
}

await runMain(run[modeName])
