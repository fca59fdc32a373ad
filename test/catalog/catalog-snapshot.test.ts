import { describe, expect, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import { DEFAULT_PAYMENT_HANDLER, makeCatalogSnapshot } from "../../src/catalog/model/catalog-snapshot.ts"
import { CatalogFile, taxRatePpm } from "../../src/catalog/model/catalog.ts"
import { demoCatalogFile, demoCatalogJson } from "../support/fixtures.ts"

const base = (): CatalogFile => ({
  currency: "usd",
  products: [
    { id: "a", title: "A", unit_amount: 100, kind: "physical", stock: 1 },
    { id: "b", title: "B", unit_amount: 200, kind: "digital", stock: 1 }
  ],
  tax_rules: [{ country: "US", rate: "0.05", shipping_taxable: false }],
  shipping_methods: [
    {
      id: "standard",
      title: "Standard",
      subtitle: "",
      carrier: "USPS",
      amount: 500,
      min_transit_days: 3,
      max_transit_days: 5,
      countries: ["US"]
    }
  ],
  digital_option: { id: "digital", title: "Digital", subtitle: "By email" },
  links: []
})

const errorOf = (file: CatalogFile): string => Either.getOrThrow(Either.flip(makeCatalogSnapshot(file)))

describe("demo catalog", () => {
  it("decodes with the CatalogFile schema", () => {
    const decoded = Schema.decodeUnknownEither(CatalogFile)(demoCatalogJson())
    expect(Either.isRight(decoded)).toBe(true)
  })

  it("snapshots with the default card handler", () => {
    const snapshot = Either.getOrThrow(makeCatalogSnapshot(demoCatalogFile()))
    expect(snapshot.currency).toBe("usd")
    expect(snapshot.products.size).toBe(6)
    expect(snapshot.products.get("tshirt-classic")).toMatchObject({ unit_amount: 2500, stock: 100, kind: "physical" })
    expect(snapshot.products.get("print-limited")?.stock).toBe(3)
    expect([...snapshot.products.values()].filter((p) => p.kind === "digital").map((p) => p.id)).toEqual([
      "ebook-field-guide",
      "gift-card-50"
    ])
    expect(snapshot.shippingMethods.map((m) => m.id)).toEqual(["standard", "express", "international"])
    expect(snapshot.digitalOption).toEqual({ id: "digital", title: "Digital delivery", subtitle: "Delivered by email" })
    expect(snapshot.links.map((l) => l.type)).toEqual(["terms_of_use", "privacy_policy"])
    // The built-in card handler, and Stripe's (offered only when Stripe is configured).
    expect(snapshot.paymentHandlers[0]).toEqual(DEFAULT_PAYMENT_HANDLER)
    expect(snapshot.paymentHandlers.map((h) => [h.id, h.psp])).toEqual([["card_tokenized", "acp_vault"], [
      "stripe_spt",
      "stripe"
    ]])
    expect(snapshot.interventions?.supported).toEqual(["3ds", "address_verification"])
    expect(snapshot.extensions).toEqual([])
    expect(snapshot.coupons.map((c) => c.code)).toEqual(["WELCOME10", "FIVEOFF", "SUMMER25", "LAUNCH50"])
    const ny = snapshot.taxRules.find((r) => r.region === "NY")
    expect(ny && taxRatePpm(ny.rate)).toBe(88_750)
  })
})

describe("makeCatalogSnapshot", () => {
  it("indexes products and applies defaults", () => {
    const snapshot = Either.getOrThrow(makeCatalogSnapshot(base()))
    expect([...snapshot.products.keys()]).toEqual(["a", "b"])
    expect(snapshot.paymentHandlers).toHaveLength(1)
    expect(snapshot.paymentHandlers[0]).toMatchObject({
      id: "card_tokenized",
      name: "dev.proto.tokenized.card",
      version: "2026-01-30",
      requires_delegate_payment: true,
      requires_pci_compliance: false,
      psp: "acp_vault",
      config: {
        accepted_brands: ["visa", "mastercard", "amex", "discover"],
        accepted_funding_types: ["credit", "debit"],
        supports_3ds: false,
        environment: "test"
      }
    })
    expect(snapshot.paymentHandlers[0]?.config).not.toHaveProperty("merchant_id")
    expect(snapshot.interventions).toBeUndefined()
    expect(snapshot.extensions).toEqual([])
  })

  it("keeps declared handlers, interventions and extensions", () => {
    const handler = { ...DEFAULT_PAYMENT_HANDLER, id: "mine" }
    const snapshot = Either.getOrThrow(
      makeCatalogSnapshot({
        ...base(),
        payment_handlers: [handler],
        interventions: { supported: ["3ds"] },
        extensions: [{ name: "discount", extends: ["$.discounts"] }]
      })
    )
    expect(snapshot.paymentHandlers).toEqual([handler])
    expect(snapshot.interventions).toEqual({ supported: ["3ds"] })
    expect(snapshot.extensions).toEqual([{ name: "discount", extends: ["$.discounts"] }])
  })

  it("rejects duplicate product ids", () => {
    const file = base()
    const first = file.products[0]!
    expect(errorOf({ ...file, products: [...file.products, first] })).toBe(
      "$.products[2].id: duplicate product id \"a\" (first at $.products[0].id)"
    )
  })

  it("a product with variants sells each variant, titled, its stock the seed's", () => {
    const file = base()
    const snapshot = Either.getOrThrow(makeCatalogSnapshot({
      ...file,
      products: [...file.products, {
        id: "lamp",
        title: "Lamp",
        description: "A lamp",
        kind: "physical",
        variants: [{ id: "lamp-red", title: "Lamp, red", unit_amount: 900, stock: 4 }, {
          id: "lamp-blue",
          unit_amount: 950
        }]
      }]
    }))
    expect(snapshot.products.get("lamp-red")).toMatchObject({
      title: "Lamp, red",
      unit_amount: 900,
      stock: 4,
      product_id: "lamp"
    })
    expect(snapshot.products.get("lamp-blue")).toMatchObject({ title: "Lamp", unit_amount: 950, stock: 0 })
    expect(snapshot.products.get("a")).toMatchObject({ product_id: "a", unit_amount: 100, stock: 1 })
    expect(snapshot.products.has("lamp")).toBe(false)
    expect(snapshot.seed.find((p) => p.id === "a")?.variants).toEqual([{ id: "a", unit_amount: 100, stock: 1 }])
  })

  it("rejects a flat product without a price or stock, and a variant id used twice", () => {
    const file = base()
    const { unit_amount: _price, ...unpriced } = file.products[0]!
    expect(errorOf({ ...file, products: [unpriced, file.products[1]!] })).toBe(
      "$.products[0].unit_amount: is missing (or give variants)"
    )
    expect(
      errorOf({
        ...file,
        products: [...file.products, { id: "c", title: "C", variants: [{ id: "a", unit_amount: 1 }] }]
      })
    )
      .toBe("$.products[2].variants[0].id: duplicate variant id \"a\" (first at $.products[0].id)")
  })

  it("rejects duplicate shipping method ids", () => {
    const file = base()
    const method = file.shipping_methods[0]!
    expect(errorOf({ ...file, shipping_methods: [method, { ...method, title: "Other" }] })).toBe(
      "$.shipping_methods[1].id: duplicate shipping method id \"standard\" (first at $.shipping_methods[0].id)"
    )
  })

  it("rejects min_transit_days above max_transit_days", () => {
    const file = base()
    const method = file.shipping_methods[0]!
    expect(errorOf({ ...file, shipping_methods: [{ ...method, min_transit_days: 6 }] })).toBe(
      "$.shipping_methods[0].min_transit_days: 6 is greater than max_transit_days 5"
    )
  })

  it("rejects a shipping method id equal to the digital option id", () => {
    const file = base()
    const method = file.shipping_methods[0]!
    expect(errorOf({ ...file, shipping_methods: [{ ...method, id: "digital" }] })).toContain(
      "$.shipping_methods[0].id: \"digital\" is also the id of $.digital_option"
    )
  })

  it("rejects duplicate payment handler ids", () => {
    expect(
      errorOf({ ...base(), payment_handlers: [DEFAULT_PAYMENT_HANDLER, DEFAULT_PAYMENT_HANDLER] })
    ).toBe(
      "$.payment_handlers[1].id: duplicate payment handler id \"card_tokenized\" (first at $.payment_handlers[0].id)"
    )
  })

  it("rejects two tax rules for the same country and region", () => {
    const file = base()
    const rules = [
      { country: "US", region: "CA", rate: "0.07", shipping_taxable: false },
      { country: "US", region: "ca", rate: "0.08", shipping_taxable: false }
    ]
    expect(errorOf({ ...file, tax_rules: [...file.tax_rules, ...rules] })).toBe(
      "$.tax_rules[2]: duplicate tax rule for \"US/CA\" (first at $.tax_rules[1])"
    )
  })

  it("reports every problem at once", () => {
    const file = base()
    const method = file.shipping_methods[0]!
    const message = errorOf({
      ...file,
      products: [...file.products, file.products[1]!],
      shipping_methods: [{ ...method, id: "digital", min_transit_days: 9 }]
    })
    expect(message.split("; ")).toHaveLength(3)
  })
})
