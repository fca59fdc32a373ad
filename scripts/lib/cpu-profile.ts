/** Where a `node --cpu-prof` profile spends its time: self time by function and by package/file (`--profile`). */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"

interface ProfileNode {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
}

interface CpuProfile {
  readonly startTime: number
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

const shortUrl = (url: string) => {
  const modules = url.lastIndexOf("node_modules/")
  if (modules >= 0) {
    const rest = url.slice(modules + "node_modules/".length).split("/")
    return rest[0]!.startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]!
  }
  const src = url.indexOf("/src/")
  if (src >= 0) return url.slice(src + 1)
  const scripts = url.indexOf("/scripts/")
  if (scripts >= 0) return url.slice(scripts + 1)
  return url === "" ? "(native/runtime)" : url.replace(/^node:/, "node:")
}

/** Self time by module and by function. */
const summarizeCpuProfile = (profile: CpuProfile, top: number): string => {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const selfByFunction = new Map<string, number>()
  const selfByModule = new Map<string, number>()
  let total = 0
  for (let i = 0; i < profile.samples.length; i++) {
    const node = byId.get(profile.samples[i]!)
    const dt = profile.timeDeltas[i] ?? 0
    if (node === undefined) continue
    total += dt
    const frame = node.callFrame
    const module = shortUrl(frame.url)
    const fn = `${frame.functionName || "(anonymous)"} ${module}:${frame.lineNumber + 1}`
    selfByFunction.set(fn, (selfByFunction.get(fn) ?? 0) + dt)
    selfByModule.set(module, (selfByModule.get(module) ?? 0) + dt)
  }
  const table = (map: Map<string, number>, n: number) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, t]) =>
        `  ${((t / total) * 100).toFixed(1).padStart(5)} %  ${(t / 1000).toFixed(0).padStart(7)} ms  ${name}`
      )
      .join("\n")
  return `total ${(total / 1e6).toFixed(1)} s sampled\nself time by module:\n${
    table(selfByModule, 15)
  }\nself time by function:\n${table(selfByFunction, top)}`
}

/** Prints where the profiled server's time went, from the profile it left in `dir` (none: nothing). */
export const printProfile = (server: string, dir: string | undefined, top = 30) => {
  const file = dir === undefined ? undefined : readdirSync(dir).find((f) => f.endsWith(".cpuprofile"))
  if (file === undefined) return
  console.log(`\nCPU profile of ${server}: ${join(dir!, file)}`)
  console.log(summarizeCpuProfile(JSON.parse(readFileSync(join(dir!, file), "utf8")), top))
}
