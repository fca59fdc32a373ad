import { defineConfig } from "vitest/config"

// How long the suite takes and why: docs/tooling.md, "Tests: how long and why".
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    poolOptions: {
      forks: {
        // A worker process runs file after file with what it has loaded (Effect, the sources,
        // PGlite's compiled WebAssembly, the migrated database dump) instead of a new process per
        // file; what a file could leave behind for the next is put back by the setup file.
        isolate: false
      }
    },
    setupFiles: ["test/support/file-isolation.ts"],
    // Vitest's default is one worker less than the cores: a single worker on a 2-core machine,
    // where much of the suite waits (server processes, Chromium, timeouts).
    maxWorkers: 2
  }
})
