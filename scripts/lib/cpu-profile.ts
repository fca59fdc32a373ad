/**
 * Where a `node --cpu-prof` profile spends its time: self time by function and by package/file.
 * Usage as a script: `node --import tsx scripts/lib/cpu-profile.ts <file.cpuprofile> [top] [skip seconds]`.
 */
import { readFileSync } from "node:fs"

interface ProfileNode {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
}

export interface CpuProfile {
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

/** Self time by module and by function, from `skipSeconds` after the profile started (skip start-up). */
export const summarizeCpuProfile = (profile: CpuProfile, top = 25, skipSeconds = 0): string => {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const selfByFunction = new Map<string, number>()
  const selfByModule = new Map<string, number>()
  let total = 0
  let elapsed = 0
  for (let i = 0; i < profile.samples.length; i++) {
    const node = byId.get(profile.samples[i]!)
    const dt = profile.timeDeltas[i] ?? 0
    elapsed += dt
    if (node === undefined || elapsed < skipSeconds * 1e6) continue
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

if (process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].replace(/^.*\/scripts\//, "/scripts/"))) {
  const file = process.argv[2]
  if (file === undefined) {
    console.error("usage: cpu-profile.ts <file.cpuprofile> [top]")
    process.exit(1)
  }
  console.log(
    summarizeCpuProfile(
      JSON.parse(readFileSync(file, "utf8")),
      Number(process.argv[3] ?? "25"),
      Number(process.argv[4] ?? "0")
    )
  )
}
