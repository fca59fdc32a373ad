/**
 * `npm run stripe:smoke` (`scripts/stripe-smoke.ts`): skipped without a key, refused with a live
 * one, and, pointed at the Stripe-compatible test server by `STRIPE_API_BASE`, a whole purchase that
 * leaves exactly one succeeded PaymentIntent for the session's total.
 */
import { describe, expect, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { FakeStripe } from "../support/stripe/fake-stripe.ts"

const REPO = fileURLToPath(new URL("../../", import.meta.url))
const TSX = join(REPO, "node_modules", ".bin", "tsx")

const smoke = (env: Record<string, string>) =>
  new Promise<{ code: number; output: string }>((resolve) => {
    execFile(
      TSX,
      ["scripts/stripe-smoke.ts"],
      {
        cwd: REPO,
        env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "", ...env },
        timeout: 120_000
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1
        resolve({ code, output: stdout + stderr })
      }
    )
  })

describe("npm run stripe:smoke", () => {
  it("says it is skipped and succeeds without STRIPE_SECRET_KEY", async () => {
    const { code, output } = await smoke({})
    expect(code).toBe(0)
    expect(output).toContain("stripe:smoke skipped")
  })

  it("refuses a live-mode key before it starts anything", async () => {
    const { code, output } = await smoke({ STRIPE_SECRET_KEY: "sk_live_not_a_real_key" })
    expect(code).toBe(1)
    expect(output).toContain("refuses a live-mode key")
    expect(output).not.toContain("sk_live_not_a_real_key")
  })

  it("buys once through a Stripe at STRIPE_API_BASE: one succeeded PaymentIntent for the session's total", async () => {
    const fake = await FakeStripe.start()
    try {
      const { code, output } = await smoke({ STRIPE_SECRET_KEY: fake.secretKey, STRIPE_API_BASE: fake.url })
      expect(output).toContain("stripe:smoke passed.")
      expect(code).toBe(0)
      const succeeded = fake.paymentIntents().filter((intent) => intent.status === "succeeded")
      expect(succeeded).toHaveLength(1)
      expect(output).toContain(`${succeeded[0]!.id} succeeded for ${succeeded[0]!.amount} usd`)
      expect(output).not.toContain(fake.secretKey)
    } finally {
      await fake.stop()
    }
  }, 150_000)
})
