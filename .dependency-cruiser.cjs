// The dependency rule of src, by folder (docs/architecture.md), checked by `npm run lint` (`depcruise src`).
// Every import counts, type-only ones too. test/ and scripts/ are not cruised.
//
// A feature is a folder of src other than shared, db, platform and app. Inside a feature:
//   <feature>/*.ts   services, ports and use cases
//   http/            the edge: routes, handlers, middleware, pages, outbound HTTP
//   store/           the SQL adapters of the feature's ports
//   wire/            the wire formats, one folder per protocol, one file per version
//   any other        the pure domain, named for what it models
// Which features a feature may import is the table FEATURES below; it has no circle, so neither
// can the imports between feature folders.

const FEATURES = {
  "catalog": ["idempotency"],
  "rate-limit": [],
  "idempotency": [],
  "delegate-payment": ["idempotency", "rate-limit"],
  "delegate-authentication": ["delegate-payment", "idempotency", "rate-limit"],
  "payments": ["catalog", "delegate-payment", "delegate-authentication"],
  "orders": ["catalog", "idempotency"],
  "checkout": ["catalog", "payments", "orders", "idempotency", "rate-limit"],
  "webhook-receiver": ["orders", "rate-limit"],
  "mcp": ["checkout"],
  "console": ["catalog", "checkout", "orders", "webhook-receiver", "carts", "feeds"],
  "stripe": ["catalog", "payments", "checkout", "orders", "idempotency", "rate-limit"],
  "feeds": ["catalog", "idempotency", "rate-limit"],
  "carts": ["catalog", "checkout", "idempotency", "rate-limit"],
  "ucp": ["catalog", "checkout", "idempotency"]
}

// Fails at load when the table has a circle (depth-first search for a back edge).
const assertNoCircle = (graph) => {
  const state = new Map()
  const visit = (name, path) => {
    if (state.get(name) === "done") return
    if (state.get(name) === "open") throw new Error(`FEATURES has a circle: ${[...path, name].join(" -> ")}`)
    if (graph[name] === undefined) throw new Error(`FEATURES names an unknown feature: ${name}`)
    state.set(name, "open")
    for (const next of graph[name]) visit(next, [...path, name])
    state.set(name, "done")
  }
  for (const name of Object.keys(graph)) visit(name, [])
}
assertNoCircle(FEATURES)

const NAMES = Object.keys(FEATURES)
const anyOf = (names) => `(?:${names.map((n) => n.replace(/[-]/g, "\\-")).join("|")})`
const FEATURE = anyOf(NAMES)
const EDGE = "(?:http|store|wire)"

const SRC = "^src/"
const SHARED = "^src/shared/"
const DB = "^src/db/"
const PLATFORM = "^src/platform/"
const PLATFORM_NOT_HTTP = "^src/platform/(?!http/)"
const APP = "^src/(?:app/|main\\.ts$)"
// Within a feature (any feature when `feature` is omitted): its root files, and its sub-folders by kind.
const rootOf = (feature = FEATURE) => `^src/${feature}/[^/]+$`
const domainOf = (feature = FEATURE) => `^src/${feature}/(?!${EDGE}/)[^/]+/`
const wireOf = (feature = FEATURE) => `^src/${feature}/wire/`
const httpOf = (feature = FEATURE) => `^src/${feature}/http/`
const storeOf = (feature = FEATURE) => `^src/${feature}/store/`

/** One rule per feature: it imports only the features its row of FEATURES names. */
const featureRules = NAMES.map((name) => ({
  name: `feature-${name}-imports-only-its-table-row`,
  comment: `src/${name} may import the features ${FEATURES[name].join(", ") || "(none)"} (FEATURES).`,
  severity: "error",
  from: { path: `^src/${anyOf([name])}/` },
  to: {
    path: `^src/${FEATURE}/`,
    pathNot: [`^src/${anyOf([name, ...FEATURES[name]])}/`]
  }
}))

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
      comment: "A domain folder is pure: it imports only domain folders (of any feature) and src/shared.",
      severity: "error",
      from: { path: domainOf() },
      to: { path: SRC, pathNot: [domainOf(), SHARED] }
    },
    {
      name: "wire-imports-only-wire-domain-and-shared",
      comment: "A wire folder imports only its own feature's wire, domain folders (of any feature) and src/shared.",
      severity: "error",
      from: { path: `^src/(${FEATURE})/wire/` },
      to: { path: SRC, pathNot: [wireOf("$1"), domainOf(), SHARED] }
    },
    {
      name: "domain-and-wire-use-only-effect-and-node-crypto",
      comment: "Domain and wire folders use no package but effect and node:crypto.",
      severity: "error",
      from: { path: [domainOf(), wireOf()] },
      to: { pathNot: [SRC, "(?:^|/)node_modules/effect/", "^(?:node:)?crypto$"] }
    },
    {
      name: "services-import-no-edge",
      comment: "A feature's root files (services, ports, use cases) import domain folders and other features' "
        + "root files, src/platform except src/platform/http, src/db and src/shared: never an http, store or wire folder.",
      severity: "error",
      from: { path: rootOf() },
      to: { path: SRC, pathNot: [rootOf(), domainOf(), PLATFORM_NOT_HTTP, DB, SHARED] }
    },
    {
      name: "stores-import-ports-domain-db",
      comment: "A store folder imports its own feature's store folder, root files and domain, other features' root "
        + "files and domain, src/platform except src/platform/http, src/db and src/shared.",
      severity: "error",
      from: { path: `^src/(${FEATURE})/store/` },
      to: { path: SRC, pathNot: [storeOf("$1"), rootOf(), domainOf(), PLATFORM_NOT_HTTP, DB, SHARED] }
    },
    {
      name: "http-imports-no-other-features-edge",
      comment: "An http folder imports anything of its own feature, other features' root files, domain and wire "
        + "(never their http or store folders), src/platform, src/db and src/shared.",
      severity: "error",
      from: { path: `^src/(${FEATURE})/http/` },
      to: { path: SRC, pathNot: ["^src/$1/", rootOf(), domainOf(), wireOf(), PLATFORM, DB, SHARED] }
    },
    ...featureRules,
    {
      name: "no-circular-folders",
      comment: "No import cycles between the folders of src.",
      severity: "error",
      scope: "folder",
      from: { path: SRC },
      to: { circular: true }
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
