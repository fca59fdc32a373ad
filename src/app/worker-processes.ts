/**
 * `WORKERS` server processes sharing the port and the database, as separate servers do
 * (`docs/concurrency.md`). A worker exiting before it listens fails the start; one dying later is
 * replaced; SIGTERM or SIGINT to the primary stops every worker gracefully, then the primary.
 */
import { Duration, Effect } from "effect"
import cluster, { type Worker } from "node:cluster"

export const isWorkerProcess = cluster.isWorker

const RESPAWN_DELAY = Duration.seconds(1)

export const superviseWorkers = (count: number): Effect.Effect<never, Error> =>
  // eslint-disable-next-line no-restricted-syntax -- made once per process, not per request
  Effect.gen(function*() {
    const workers = new Set<Worker>()
    let stopping = false
    const fork = (): Worker => {
      const worker = cluster.fork()
      workers.add(worker)
      return worker
    }
    yield* Effect.acquireRelease(
      Effect.async<void, Error>((resume) => {
        let listening = 0
        const onListening = () => {
          listening++
          if (listening === count) {
            cluster.off("listening", onListening)
            cluster.off("exit", onEarlyExit)
            resume(Effect.void)
          }
        }
        const onEarlyExit = (worker: Worker, code: number | null, signal: string | null) => {
          workers.delete(worker)
          cluster.off("listening", onListening)
          cluster.off("exit", onEarlyExit)
          resume(Effect.fail(new Error(`a worker exited while starting (${signal ?? `code ${code}`})`)))
        }
        cluster.on("listening", onListening)
        cluster.on("exit", onEarlyExit)
        for (let i = 0; i < count; i++) fork()
      }),
      () =>
        Effect.async<void>((resume) => {
          stopping = true
          const alive = [...workers].filter((worker) => !worker.isDead())
          if (alive.length === 0) return resume(Effect.void)
          let left = alive.length
          for (const worker of alive) {
            worker.once("exit", () => {
              left--
              if (left === 0) resume(Effect.void)
            })
            worker.process.kill("SIGTERM")
          }
        })
    )
    yield* Effect.logInfo(`${count} workers listening`)
    const runtime = yield* Effect.runtime<never>()
    cluster.on("exit", (worker, code, signal) => {
      workers.delete(worker)
      if (stopping) return
      void Effect.runPromiseExit(
        Effect.logWarning(`worker ${worker.process.pid} exited (${signal ?? `code ${code}`}); starting another`).pipe(
          Effect.zipRight(Effect.sleep(RESPAWN_DELAY)),
          Effect.andThen(() => {
            if (!stopping) fork()
          }),
          Effect.provide(runtime.context)
        )
      )
    })
    return yield* Effect.never
  }).pipe(Effect.scoped)
