// Lint and format the way Effect-TS's own repositories do (Effect-TS/effect, Effect-TS/examples): ESLint's and
// typescript-eslint's recommended rules, with Effect's dprint rule as the formatter. `npm run lint` reports,
// `npm run lint:fix` rewrites. No type-aware rules, so lint needs no type information and stays fast.
// The dependency rule between the folders of src lives in .dependency-cruiser.cjs (see docs/tooling.md).
import * as effectEslint from "@effect/eslint-plugin"
import js from "@eslint/js"
import { defineConfig } from "eslint/config"
import tseslint from "typescript-eslint"

export default defineConfig(
  {
    ignores: ["**/node_modules/**", "**/dist/**"]
  },
  // Registers the `@effect` plugin and turns off ESLint's layout rules, which would fight the formatter.
  ...effectEslint.configs.dprint,
  {
    files: ["**/*.ts", "**/*.mjs"],
    extends: [js.configs.recommended, ...tseslint.configs.recommended],
    linterOptions: {
      reportUnusedDisableDirectives: "error"
    },
    rules: {
      // The formatter, with Effect's settings (as in Effect-TS/effect's eslint.config.mjs).
      "@effect/dprint": ["error", {
        config: {
          indentWidth: 2,
          lineWidth: 120,
          semiColons: "asi",
          quoteStyle: "alwaysDouble",
          trailingCommas: "never",
          operatorPosition: "maintain",
          "arrowFunction.useParentheses": "force"
        }
      }],

      "eqeqeq": ["error", "smart"],
      "object-shorthand": "error",
      "@typescript-eslint/array-type": ["error", { default: "generic", readonly: "generic" }],
      "@typescript-eslint/no-unused-vars": ["error", {
        argsIgnorePattern: "^_",
        varsIgnorePattern: "^_",
        caughtErrorsIgnorePattern: "^_",
        ignoreRestSiblings: true
      }],

      // Off, as in Effect's own configuration, because they fight deliberate patterns:
      // `Effect.gen(function*() { return ... })` needs no yield;
      "require-yield": "off",
      // `!` after an index or lookup whose presence was checked (tsconfig has noUncheckedIndexedAccess);
      "@typescript-eslint/no-non-null-assertion": "off",
      // `any` where Effect's types are erased on purpose (tests building layers and clients of the HttpApi);
      "@typescript-eslint/no-explicit-any": "off",
      // `interface Session extends Schema.Schema.Type<typeof Session> {}`, Effect's way of naming a schema's type.
      "@typescript-eslint/no-empty-object-type": "off"
    }
  },
  {
    // The service writes through its logger (src/platform/log-output.ts); only the entry point prints.
    files: ["src/**/*.ts"],
    ignores: ["src/main.ts"],
    rules: {
      "no-console": "error"
    }
  },
  {
    // A generator function is an object of its own each time its expression runs, and V8 gives each
    // one its own map in the old generation, which points back at the function: everything the
    // function captures (a request's values) then outlives the young generation, is copied into the
    // old one and waits there for a full collection. A function run per request or per call writes
    // its generator once, `Effect.fnUntraced(function*(args) { ... })`, instead of returning
    // `Effect.gen(function*() { ... })` from a closure (docs/performance.md, "generators made once").
    files: ["src/**/*.ts"],
    rules: {
      "no-restricted-syntax": ["error", {
        selector:
          ":matches(ArrowFunctionExpression, FunctionExpression[generator=false], FunctionDeclaration) CallExpression[callee.object.name='Effect'][callee.property.name='gen']",
        message:
          "A generator made per call outlives the young generation (V8 gives it an old-generation map): define it once with Effect.fnUntraced(function*(args) { ... })."
      }]
    }
  },
  {
    // Node loads every module a package's index re-exports: @effect/platform's would bring in the
    // Scalar and Swagger UI bundles (≈ 20 MB of heap in a server that never serves them), so the
    // service imports its modules one by one (`import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"`).
    files: ["src/**/*.ts"],
    rules: {
      "@effect/no-import-from-barrel-package": ["error", {
        packageNames: ["@effect/platform", "@effect/platform-node"]
      }]
    }
  }
)
