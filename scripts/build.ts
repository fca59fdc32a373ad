/**
 * `npm run build` (and `prestart`): src/ transpiled to JavaScript for `node dist/main.js`, only
 * when what the output depends on changed, and never under a server running from an earlier build.
 *
 * Each build is a directory of its own beside `dist`, `dist-<hash>`, named by a hash of its inputs
 * (src/, the tsconfig files, package.json, package-lock.json, this script); `dist` is a symbolic
 * link to the current one. A build compiles into a fresh `dist.tmp-<pid>-<random>`, renames it to
 * `dist-<hash>`, then renames a new link over `dist`: rename(2) replaces atomically, so `dist` is a
 * complete build at every moment. Node runs `dist/main.js` from its real path, so whatever a server
 * loads later (the embedded database's server script) comes from the build it started with.
 *
 * Unchanged inputs: nothing is written. Two builds at once compile apart; the first to rename its
 * directory to `dist-<hash>` wins and the other uses it; either link is a complete build. Kept:
 * the current build and the `KEEP - 1` made current before it (a server older than those loses
 * the files it loads later); older builds, and directories of builds no longer running, are removed.
 *
 * Usage: `tsx scripts/build.ts [--root <checkout>]` (default: the checkout of this script).
 */
import { execFileSync } from "node:child_process"
import { createHash, randomBytes } from "node:crypto"
import {
  existsSync,
  lstatSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync
} from "node:fs"
import { createRequire } from "node:module"
import { basename, join, relative } from "node:path"
import { fileURLToPath } from "node:url"

/** Builds kept: the current one and those made current just before it. */
const KEEP = 3

const rootFlag = process.argv.indexOf("--root")
const root = rootFlag >= 0 ? process.argv[rootFlag + 1]! : fileURLToPath(new URL("../", import.meta.url))
const link = join(root, "dist")
const tag = () => `${process.pid}-${randomBytes(4).toString("hex")}`

/** The files the output depends on, by path relative to the checkout, in a fixed order. */
const inputs = (): ReadonlyArray<string> => {
  const sources = (readdirSync(join(root, "src"), { recursive: true }) as Array<string>)
    .map((path) => join("src", path))
    .filter((path) => statSync(join(root, path)).isFile())
  const others = ["tsconfig.json", "tsconfig.build.json", "package.json", "package-lock.json"]
  const script = relative(root, fileURLToPath(import.meta.url))
  return [...sources, ...others, script].filter((path) => existsSync(join(root, path))).sort()
}

const inputsHash = (): string => {
  const hash = createHash("sha256")
  for (const path of inputs()) hash.update(path).update("\0").update(readFileSync(join(root, path))).update("\0")
  return hash.digest("hex").slice(0, 16)
}

/** The build `dist` points to now (its directory's name), or undefined when it is no link. */
const current = (): string | undefined => {
  try {
    return basename(readlinkSync(link))
  } catch {
    return undefined
  }
}

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** Points `dist` at `name` (made current now: its mtime says when, for `clean`). */
const select = (name: string) => {
  const now = new Date()
  utimesSync(join(root, name), now, now)
  if (process.platform === "win32") {
    // No atomic replacement of a directory link there: remove, then link (a junction needs no rights).
    rmSync(link, { force: true })
    symlinkSync(join(root, name), link, "junction")
    return
  }
  const fresh = join(root, `dist.link-${tag()}`)
  symlinkSync(name, fresh)
  const stat = lstatSync(link, { throwIfNoEntry: false })
  // A `dist` directory of a build made before `dist` was a link: moved aside, then cleaned as any old build.
  if (stat?.isDirectory()) {
    try {
      renameSync(link, join(root, `dist-legacy-${tag()}`))
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error
    }
  }
  renameSync(fresh, link)
}

/** Removes old builds beyond `KEEP` and what builds that are no longer running left behind. */
const clean = () => {
  const builds: Array<{ name: string; since: number }> = []
  for (const name of readdirSync(root)) {
    const left = /^dist\.(?:tmp|link)-(\d+)-[0-9a-f]+$/.exec(name)
    if (left !== null) {
      if (!isAlive(Number(left[1]))) rmSync(join(root, name), { recursive: true, force: true })
    } else if (name.startsWith("dist-")) {
      builds.push({ name, since: lstatSync(join(root, name)).mtimeMs })
    }
  }
  const kept = new Set([current(), ...builds.sort((a, b) => b.since - a.since).slice(0, KEEP).map((b) => b.name)])
  for (const { name } of builds) if (!kept.has(name)) rmSync(join(root, name), { recursive: true, force: true })
}

const build = () => {
  const name = `dist-${inputsHash()}`
  if (current() === name && existsSync(join(root, name))) {
    console.log(`dist is up to date (${name})`)
    return
  }
  if (!existsSync(join(root, name))) {
    const temporary = join(root, `dist.tmp-${tag()}`)
    const tsc = createRequire(join(root, "package.json")).resolve("typescript/bin/tsc")
    try {
      execFileSync(process.execPath, [tsc, "-p", "tsconfig.build.json", "--outDir", temporary], {
        cwd: root,
        stdio: "inherit"
      })
      renameSync(temporary, join(root, name))
    } catch (error) {
      rmSync(temporary, { recursive: true, force: true })
      const code = (error as NodeJS.ErrnoException).code
      // Another build of the same inputs renamed its directory first: the same output, used as is.
      if (code !== "ENOTEMPTY" && code !== "EEXIST") throw error
    }
  }
  select(name)
  console.log(`dist is ${name}`)
}

try {
  build()
  clean()
} catch (error) {
  console.error(error instanceof Error ? error.message : error)
  process.exitCode = 1
}
