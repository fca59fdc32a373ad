/**
 * How the bench measures one scenario: the load generator (`load.ts`) for `--duration` seconds,
 * `--rounds` times, sampling the server's RSS and every party's CPU; the row is the median run.
 */
import { levels, MB, measureRounds, perRunSeconds, pin, record, type Row, workDir } from "./bench-setup.ts"
import { medianOf } from "./figures.ts"
import { type LoadOptions, type LoadResult, runLoad } from "./load.ts"
import { childrenOf, cpuMeter, type CpuUse, type NodeProcess, sampleRss } from "./processes.ts"

export type CannonOptions = Omit<LoadOptions, "connections" | "seconds" | "url"> & { path: string }

/**
 * `rounds` runs of the load generator for `perRunSeconds` at `connections`, sampling the server's
 * RSS and the CPU of every party: the row of the median run, with every run's rate.
 */
export const measure = async (
  target: string,
  proc: NodeProcess,
  scenario: Row["scenario"],
  options: CannonOptions,
  connections: number,
  rounds = measureRounds
): Promise<Row> => {
  const sampler = sampleRss([proc.pid], 200)
  const runs: Array<{ readonly result: LoadResult; readonly cpu: CpuUse; readonly rate: number }> = []
  for (let round = 0; round < rounds; round++) {
    const meter = cpuMeter([proc.pid], childrenOf(proc.pid))
    const result = await runLoad(
      { ...options, url: proc.baseUrl + options.path, connections, seconds: perRunSeconds },
      pin,
      workDir
    )
    runs.push({ result, cpu: meter.stop(), rate: result.requests / result.durationSeconds })
  }
  sampler.stop()
  const { cpu, result } = medianOf(runs, (run) => run.rate)
  return {
    target,
    scenario,
    connections,
    requestsPerSecond: result.requests / result.durationSeconds,
    p50: result.p50,
    p99: result.p99,
    requests: result.requests,
    errors: runs.reduce((sum, run) => sum + run.result.errors, 0),
    peakRssMb: (sampler.peak()[0] ?? 0) / MB,
    cpu,
    rounds: runs.map((run) => run.rate)
  }
}

/** `seconds` (5 unless told) at the connections to be measured: connections open, JIT warm, pool full. */
export const warmUp = (proc: NodeProcess, options: CannonOptions, connections = 16, seconds = 5) =>
  runLoad({ ...options, url: proc.baseUrl + options.path, connections, seconds }, pin, workDir)

/** Runs the load at every level (after a warm-up), sampling the server's RSS. */
export const cannonScenario = async (
  target: string,
  proc: NodeProcess,
  scenario: Row["scenario"],
  options: CannonOptions
) => {
  await warmUp(proc, options)
  for (const connections of levels) record(await measure(target, proc, scenario, options, connections))
}
