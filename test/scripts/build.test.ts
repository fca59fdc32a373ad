/**
 * `npm run build` (`scripts/build.ts`) on a small project laid out as this one (its tsconfig files,
 * a `src/` with a main module that loads another one later): unchanged inputs build nothing, a
 * server running from `dist/` keeps the files of its build, and builds at once both leave a
 * complete `dist/`.
 */
import { describe, expect, it } from "@effect/vitest"
import { type ChildProcess, spawn } from "node:child_process"
import {
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const REPO = fileURLToPath(new URL("../../", import.meta.url))
const TSX = join(REPO, "node_modules", ".bin", "tsx")

/** A project with this one's build settings; `version` is what its modules say. */
const makeProject = () => {
  const root = mkdtempSync(join(tmpdir(), "build-test-"))
  mkdirSync(join(root, "src"))
  for (const file of ["tsconfig.json", "tsconfig.build.json"]) copyFileSync(join(REPO, file), join(root, file))
  writeFileSync(join(root, "package.json"), JSON.stringify({ type: "module" }))
  writeFileSync(join(root, "package-lock.json"), "{}")
  symlinkSync(join(REPO, "node_modules"), join(root, "node_modules"))
  // Prints its version, then loads `later` when a line arrives, as a server loads files after its start.
  writeFileSync(
    join(root, "src", "main.ts"),
    `import { VERSION } from "./version.ts"
console.log(\`main \${VERSION}\`)
process.stdin.once("data", async () => {
  const { LATER } = await import("./later.ts")
  console.log(\`later \${LATER}\`)
  process.exit(0)
})
`
  )
  const setVersion = (version: number) => {
    writeFileSync(join(root, "src", "version.ts"), `export const VERSION = ${version}\n`)
    writeFileSync(join(root, "src", "later.ts"), `export const LATER = ${version}\n`)
  }
  setVersion(1)
  return { root, setVersion, remove: () => rmSync(root, { recursive: true, force: true }) }
}

const finished = (child: ChildProcess) =>
  new Promise<{ code: number | null; output: string }>((resolve) => {
    let output = ""
    child.stdout?.on("data", (chunk) => (output += chunk))
    child.stderr?.on("data", (chunk) => (output += chunk))
    child.on("close", (code) => resolve({ code, output }))
  })

const build = (root: string) => spawn(TSX, [join(REPO, "scripts", "build.ts"), "--root", root], { cwd: root })

const built = async (root: string) => {
  const result = await finished(build(root))
  expect(result.code, result.output).toBe(0)
  return result.output
}

/** What `node dist/main.js` prints before it is given a line. */
const runMain = (root: string) =>
  Promise.race([
    finished(spawn(process.execPath, ["dist/main.js"], { cwd: root, stdio: ["ignore", "pipe", "pipe"] })),
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error("main did not finish")), 20_000))
  ])

/** Every entry of the project beside src, and every file of each build with its modification time. */
const snapshot = (root: string) =>
  readdirSync(root).sort().map((name) => {
    const path = join(root, name)
    const stat = lstatSync(path)
    if (stat.isSymbolicLink()) return `${name} -> ${readlinkSync(path)}`
    if (!name.startsWith("dist")) return name
    const files = (readdirSync(path, { recursive: true }) as Array<string>).sort()
    return `${name}: ${files.map((file) => `${file}@${statSync(join(path, file)).mtimeMs}`).join(", ")}`
  })

/** The builds kept beside `dist`. */
const builds = (root: string) => readdirSync(root).filter((name) => name.startsWith("dist-")).sort()

describe("npm run build", () => {
  it(
    "builds once; a second build with unchanged inputs writes nothing, even with newer modification times",
    async () => {
      const project = makeProject()
      try {
        // A dist/ directory as an earlier build script left it: replaced by the link, kept aside.
        mkdirSync(join(project.root, "dist"))
        writeFileSync(join(project.root, "dist", "main.js"), "")
        expect(await built(project.root)).toMatch(/dist is dist-[0-9a-f]{16}/)
        expect(lstatSync(join(project.root, "dist")).isSymbolicLink()).toBe(true)
        expect((await runMain(project.root)).output).toBe("main 1\n")
        const before = snapshot(project.root)
        expect(before.some((entry) => entry.startsWith("dist-legacy-"))).toBe(true)
        utimesSync(join(project.root, "src", "main.ts"), new Date(), new Date())
        expect(await built(project.root)).toMatch(/dist is up to date \(dist-[0-9a-f]{16}\)/)
        expect(snapshot(project.root)).toEqual(before)
      } finally {
        project.remove()
      }
    },
    120_000
  )

  it("a build while a server runs from dist/ leaves that server its own build; old builds go later", async () => {
    const project = makeProject()
    try {
      await built(project.root)
      const first = readlinkSync(join(project.root, "dist"))
      const server = spawn(process.execPath, ["dist/main.js"], { cwd: project.root })
      const serverDone = finished(server)
      await new Promise<void>((resolve) => server.stdout.once("data", () => resolve()))
      project.setVersion(2)
      await built(project.root)
      expect(readlinkSync(join(project.root, "dist"))).not.toBe(first)
      expect((await runMain(project.root)).output).toBe("main 2\n")
      // The running server loads its module now: from the build it started with, still there.
      server.stdin.write("go\n")
      expect(await serverDone).toEqual({ code: 0, output: "main 1\nlater 1\n" })
      // Three builds later the first is gone; the current one and the two before it stay.
      for (const version of [3, 4, 5]) {
        project.setVersion(version)
        await built(project.root)
      }
      expect(existsSync(join(project.root, first))).toBe(false)
      const current = readlinkSync(join(project.root, "dist"))
      expect(builds(project.root)).toHaveLength(3)
      expect(builds(project.root)).toContain(current)
      expect((await runMain(project.root)).output).toBe("main 5\n")
    } finally {
      project.remove()
    }
  }, 120_000)

  it("two builds at once both succeed and leave one complete dist/, nothing of theirs behind", async () => {
    const project = makeProject()
    try {
      await built(project.root)
      project.setVersion(6)
      const [one, two] = await Promise.all([finished(build(project.root)), finished(build(project.root))])
      expect(one.code, one.output).toBe(0)
      expect(two.code, two.output).toBe(0)
      const current = readlinkSync(join(project.root, "dist"))
      expect(existsSync(join(project.root, current, "later.js"))).toBe(true)
      expect((await runMain(project.root)).output).toBe("main 6\n")
      const others = readdirSync(project.root).filter((name) => name.startsWith("dist") && !name.startsWith("dist-"))
      expect(others).toEqual(["dist"])
      expect(await built(project.root)).toContain("up to date")
    } finally {
      project.remove()
    }
  }, 120_000)
})
