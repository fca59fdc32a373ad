/**
 * Run as a process by test/db/embedded-database.test.ts: takes the lock of the data directory
 * `process.argv[2]` and prints `locked` or `refused`; holds a lock it got until its stdin ends.
 */
import { Effect } from "effect"
import { lockDataDir } from "../../src/db/embedded-database.ts"

const stdinEnded = Effect.async<void>((resume) => {
  process.stdin.once("end", () => resume(Effect.void))
  process.stdin.resume()
})

Effect.gen(function*() {
  const outcome = yield* lockDataDir(process.argv[2] ?? "").pipe(
    Effect.as("locked"),
    Effect.catchAll(() => Effect.succeed("refused"))
  )
  process.stdout.write(`${outcome}\n`)
  if (outcome === "locked") yield* stdinEnded
}).pipe(Effect.scoped, Effect.runPromise).then(() => process.exit(0))
