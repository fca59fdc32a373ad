// The dependency rule between the folders of src (see docs/tooling.md), checked by `npm run lint`
// (`depcruise src`). Paths are relative to the repository root; every import counts, type-only ones too.
// test/ and scripts/ are not cruised: the rule does not constrain them.

// Folders of src that are not features.
const NOT_FEATURE = "(?!(?:shared|db|platform|app)/)"
// A file in a feature folder (at any depth), by the name of the file; the feature's name is capture group 1
// when `capture` is true. (`.*(?<=/)` rather than `(?:.+/)?`: dependency-cruiser refuses nested quantifiers.)
const inFeature = (fileName, capture = false) =>
  `^src/${NOT_FEATURE}${capture ? "([^/]+)" : "[^/]+"}/.*(?<=/)${fileName}$`

// A file's role in a feature comes from its name; a name that fits both (sql-order-store.ts) is an adapter.
const ADAPTER_NAME = "(?:[^/]+-(?:api|handlers|middleware)|(?:sql|node)-[^/]+)\\.ts"
const SERVICE_NAME = "(?!(?:sql|node)-)(?:[^/]+-(?:service|store|provider|processor|sender|transport)|vault|vault-crypto)\\.ts"
const DOMAIN_NAME = `(?!${ADAPTER_NAME}$)(?!${SERVICE_NAME}$)[^/]+\\.ts`

const SERVICE = inFeature(SERVICE_NAME)
const DOMAIN = inFeature(DOMAIN_NAME)

const SHARED = "^src/shared/"
const DB = "^src/db/"
const PLATFORM = "^src/platform/"
const PLATFORM_NOT_HTTP = "^src/platform/(?!http/)"
const APP = "^src/(?:app/|main\\.ts$)"
// A module inside src (as opposed to a package or a Node built-in).
const SRC = "^src/"

/** @type {import("dependency-cruiser").IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "shared-imports-only-shared",
      comment: "src/shared is pure helpers: it imports only src/shared.",
      severity: "error",
      from: { path: SHARED },
      to: { path: SRC, pathNot: [SHARED] }
    },
    {
      name: "db-imports-only-db-and-shared",
      comment: "src/db imports only src/db and src/shared.",
      severity: "error",
      from: { path: DB },
      to: { path: SRC, pathNot: [DB, SHARED] }
    },
    {
      name: "platform-imports-only-platform-db-shared",
      comment: "src/platform imports only src/platform, src/db and src/shared: never a feature, never the app.",
      severity: "error",
      from: { path: PLATFORM },
      to: { path: SRC, pathNot: [PLATFORM, DB, SHARED] }
    },
    {
      name: "only-main-imports-app",
      comment: "src/app is the composition root: nothing in src imports it except src/main.ts.",
      severity: "error",
      from: { path: SRC, pathNot: APP },
      to: { path: APP }
    },
    {
      name: "domain-imports-only-domain-and-shared",
      comment: "Domain files (a feature's files that are neither adapters nor services/ports) are pure: "
        + "they import only domain files (of any feature) and src/shared.",
      severity: "error",
      from: { path: DOMAIN },
      to: { path: SRC, pathNot: [DOMAIN, SHARED] }
    },
    {
      name: "domain-uses-only-effect-and-node-crypto",
      comment: "Domain files use no package but effect and node:crypto "
        + "(no @effect/platform, no @effect/sql*, no other node:* module).",
      severity: "error",
      from: { path: DOMAIN },
      to: { pathNot: [SRC, "(?:^|/)node_modules/effect/", "^(?:node:)?crypto$"] }
    },
    {
      name: "services-import-no-adapters-http-or-app",
      comment: "Services and ports (*-service, *-store, *-provider, *-processor, *-sender, *-transport, vault, vault-crypto) "
        + "import domain, services/ports of any feature, src/platform except src/platform/http, src/db, src/shared.",
      severity: "error",
      from: { path: SERVICE },
      to: { path: SRC, pathNot: [DOMAIN, SERVICE, PLATFORM_NOT_HTTP, DB, SHARED] }
    },
    {
      name: "adapters-import-no-other-features-adapters-or-app",
      comment: "Adapters (*-api, *-handlers, *-middleware, sql-*, node-*) import anything in their own feature, "
        + "other features' domain and services/ports (never their adapters), src/platform, src/db, src/shared.",
      severity: "error",
      from: { path: inFeature(ADAPTER_NAME, true) },
      to: { path: SRC, pathNot: ["^src/$1/", DOMAIN, SERVICE, PLATFORM, DB, SHARED] }
    },
    {
      name: "no-circular",
      comment: "No import cycles between the files of src.",
      severity: "error",
      from: { path: SRC },
      to: { circular: true }
    },
    {
      name: "not-to-unresolvable",
      comment: "Every import in src resolves to a file or an installed package.",
      severity: "error",
      from: { path: SRC },
      to: { couldNotResolve: true }
    }
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    // Type-only imports are dependencies too.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      mainFields: ["module", "main", "types"]
    },
    reporterOptions: {
      text: { highlightFocused: true }
    }
  }
}
