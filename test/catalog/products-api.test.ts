/**
 * The merchant's Products API: validation with JSONPath params, ETag / If-Match (412), idempotent
 * create, archive, stock, and what checkout sees after each change (the same process: at once).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { API_KEY, createReadySession, get, post, request, testApp } from "../support/http.ts"
import { storesUnderTest } from "../support/store-under-test.ts"

const lamp = {
  id: "lamp",
  title: "Desk Lamp",
  description: "A lamp for a desk",
  categories: ["lighting"],
  condition: "new",
  options: [{ name: "color", values: ["black", "white"] }],
  variants: [
    {
      id: "lamp-black",
      title: "Desk Lamp, black",
      unit_amount: 3500,
      option_values: [{ name: "color", value: "black" }],
      stock: 5,
      tax_category: "housewares"
    },
    {
      id: "lamp-white",
      title: "Desk Lamp, white",
      unit_amount: 3700,
      list_amount: 4000,
      stock: 0,
      availability: "out_of_stock"
    }
  ]
}

const put = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  request("PUT", path, { body, headers })
const patch = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  request("PATCH", path, { body, headers })

for (const store of storesUnderTest) {
  describe.skipIf(!store.available)(`Products API on ${store.name}`, () => {
    store.register()
    const run = <A, E>(effect: Effect.Effect<A, E, any>) =>
      Effect.flatMap(store.freshStores, (stores) => Effect.provide(effect, testApp(stores))) as Effect.Effect<
        A,
        E,
        never
      >

    it.effect("create, read with its ETag, list; the file's products are there, one variant each", () =>
      run(Effect.gen(function*() {
        const created = yield* post("/products", lamp)
        expect(created.status).toBe(201)
        expect(created.headers.get("etag")).toBe("\"1\"")
        expect(created.body.variants[0]).toMatchObject({
          id: "lamp-black",
          unit_amount: 3500,
          currency: "usd",
          availability: "in_stock",
          kind: "physical",
          archived: false,
          stock: { on_hand: 5, reserved: 0, available: 5 }
        })
        const read = yield* get("/products/lamp")
        expect(read.status).toBe(200)
        expect(read.headers.get("etag")).toBe("\"1\"")
        expect(read.body).toEqual(created.body)
        const seeded = yield* get("/products/tshirt-classic")
        expect(seeded.body.variants).toHaveLength(1)
        expect(seeded.body.variants[0]).toMatchObject({ id: "tshirt-classic", unit_amount: 2500 })
        const first = yield* get("/products?limit=3")
        expect(first.body.data.map((p: { id: string }) => p.id)).toEqual([
          "ebook-field-guide",
          "gift-card-50",
          "hoodie-zip"
        ])
        const second = yield* get(`/products?limit=3&cursor=${first.body.next_cursor}`)
        expect(second.body.data.map((p: { id: string }) => p.id)).toEqual(["lamp", "mug-ceramic", "print-limited"])
        const last = yield* get(`/products?limit=3&cursor=${second.body.next_cursor}`)
        expect(last.body).toMatchObject({ next_cursor: null })
        expect(last.body.data.map((p: { id: string }) => p.id)).toEqual(["tshirt-classic"])
        const searched = yield* get("/products?q=DESK")
        expect(searched.body.data.map((p: { id: string }) => p.id)).toEqual(["lamp"])
        const out = yield* get("/products?availability=out_of_stock")
        expect(out.body.data.map((p: { id: string }) => p.id)).toEqual(["lamp"])
        expect((yield* get("/products?cursor=nope!")).status).toBe(400)
      })))

    it.effect("validation: 400 with the JSONPath of the first problem; ids taken: 409", () =>
      run(Effect.gen(function*() {
        const bad = yield* post("/products", { ...lamp, variants: [{ ...lamp.variants[0], unit_amount: 12.5 }] })
        expect(bad.status).toBe(400)
        expect(bad.body.param).toBe("$.variants[0].unit_amount")
        const none = yield* post("/products", { ...lamp, variants: [] })
        expect(none.status).toBe(400)
        expect(none.body.param).toBe("$.variants")
        const twice = yield* post("/products", { ...lamp, variants: [lamp.variants[0], lamp.variants[0]] })
        expect(twice.status).toBe(400)
        expect(twice.body.param).toBe("$.variants[1].id")
        expect((yield* post("/products", lamp)).status).toBe(201)
        const again = yield* post("/products", lamp)
        expect(again.status).toBe(409)
        expect(again.body).toMatchObject({ code: "product_exists", param: "$.id" })
        const taken = yield* post("/products", { ...lamp, id: "lamp-2" })
        expect(taken.status).toBe(409)
        expect(taken.body).toMatchObject({ code: "variant_id_taken", param: "$.variants[0].id" })
        const seededId = yield* post("/products", {
          ...lamp,
          id: "other",
          variants: [{ id: "mug-ceramic", unit_amount: 1 }]
        })
        expect(seededId.body.code).toBe("variant_id_taken")
        const wrongId = yield* put("/products/lamp", { ...lamp, id: "lamp-3" })
        expect(wrongId.status).toBe(400)
        expect(wrongId.body.param).toBe("$.id")
        expect((yield* put("/products/missing", { ...lamp, id: "missing" })).status).toBe(404)
        expect((yield* patch("/products/lamp/variants/nope", { unit_amount: 1 })).body.param).toBe("$.variant_id")
        expect((yield* post("/products", lamp, { auth: API_KEY })).status).toBe(403)
      })))

    it.effect("If-Match: a write of the version read goes through, a stale one is 412 and changes nothing", () =>
      run(Effect.gen(function*() {
        yield* post("/products", lamp)
        const first = yield* patch("/products/lamp/variants/lamp-black", { unit_amount: 3000 }, { "if-match": "\"1\"" })
        expect(first.status).toBe(200)
        expect(first.headers.get("etag")).toBe("\"2\"")
        const stale = yield* patch("/products/lamp/variants/lamp-black", { unit_amount: 2000 }, { "if-match": "\"1\"" })
        expect(stale.status).toBe(412)
        expect(stale.body.code).toBe("precondition_failed")
        const stalePut = yield* put("/products/lamp", { ...lamp, title: "Lamp" }, { "if-match": "\"1\"" })
        expect(stalePut.status).toBe(412)
        expect((yield* request("DELETE", "/products/lamp", { headers: { "if-match": "W/\"1\"" } })).status).toBe(412)
        const read = yield* get("/products/lamp")
        expect(read.body.variants[0].unit_amount).toBe(3000)
        expect(read.body.title).toBe("Desk Lamp")
        const any = yield* put("/products/lamp", { ...lamp, title: "Lamp" }, { "if-match": "*" })
        expect(any.status).toBe(200)
        expect(any.body.version).toBe(3)
      })))

    it.effect("an Idempotency-Key replays the create's answer", () =>
      run(Effect.gen(function*() {
        const headers = { "idempotency-key": "create-lamp-1" }
        const first = yield* post("/products", lamp, { headers })
        const replay = yield* post("/products", lamp, { headers })
        expect(first.status).toBe(201)
        expect(replay.status).toBe(201)
        expect(replay.headers.get("idempotent-replayed")).toBe("true")
        expect(replay.body).toEqual(first.body)
        expect((yield* post("/products", { ...lamp, title: "x" }, { headers })).status).toBe(409)
      })))

    it.effect("checkout sees a new product, a new price, an archive at once", () =>
      run(Effect.gen(function*() {
        yield* post("/products", lamp)
        const session = yield* createReadySession([{ id: "lamp-black", quantity: 2 }])
        expect(session.totals.find((t) => t.type === "items_base_amount")?.amount).toBe(7000)
        yield* patch("/products/lamp/variants/lamp-black", { unit_amount: 3000 })
        const repriced = yield* post(`/checkout_sessions/${session.id}`, {})
        expect(repriced.body.totals.find((t: { type: string }) => t.type === "items_base_amount")?.amount).toBe(6000)
        const unavailable = yield* post("/checkout_sessions", { items: [{ id: "lamp-white", quantity: 1 }] })
        expect(unavailable.status).toBe(422)
        expect(unavailable.body.code).toBe("out_of_stock")
        const archived = yield* request("DELETE", "/products/lamp")
        expect(archived.status).toBe(200)
        expect(archived.body.archived).toBe(true)
        expect(archived.body.variants.every((v: { archived: boolean }) => v.archived)).toBe(true)
        const gone = yield* post("/checkout_sessions", { items: [{ id: "lamp-black", quantity: 1 }] })
        expect(gone.status).toBe(400)
        expect(gone.body.param).toBe("$.items[0].id")
        expect((yield* get("/products")).body.data.some((p: { id: string }) => p.id === "lamp")).toBe(false)
        expect((yield* get("/products?archived=true")).body.data.some((p: { id: string }) => p.id === "lamp")).toBe(
          true
        )
      })))

    it.effect("stock: set on hand, never below what sessions hold (422)", () =>
      run(Effect.gen(function*() {
        yield* post("/products", lamp)
        yield* createReadySession([{ id: "lamp-black", quantity: 3 }])
        const below = yield* patch("/products/lamp/variants/lamp-black", { stock: 2 })
        expect(below.status).toBe(422)
        expect(below.body).toMatchObject({ code: "stock_below_reserved", param: "$.stock" })
        const set = yield* patch("/products/lamp/variants/lamp-black", { stock: 10 })
        expect(set.status).toBe(200)
        expect(set.body.variants[0].stock).toEqual({ on_hand: 10, reserved: 3, available: 7 })
        const more = yield* post("/checkout_sessions", { items: [{ id: "lamp-black", quantity: 8 }] })
        expect(more.status).toBe(422)
      })))

    it.effect("expected_stock: the stock is set only while that many are on hand (409), and only with a stock", () =>
      run(Effect.gen(function*() {
        yield* post("/products", lamp)
        const stale = yield* patch("/products/lamp/variants/lamp-black", {
          unit_amount: 999,
          stock: 4,
          expected_stock: 7
        })
        expect(stale.status).toBe(409)
        expect(stale.body).toMatchObject({ code: "stock_changed", param: "$.expected_stock" })
        const unchanged = yield* get("/products/lamp")
        expect(unchanged.body.variants[0]).toMatchObject({ unit_amount: 3500, stock: { on_hand: 5 } })
        const onHand = 5
        const alone = yield* patch("/products/lamp/variants/lamp-black", { expected_stock: onHand })
        expect(alone.status).toBe(400)
        expect(alone.body).toMatchObject({ code: "invalid", param: "$.expected_stock" })
        const set = yield* patch("/products/lamp/variants/lamp-black", { stock: 4, expected_stock: onHand })
        expect(set.status).toBe(200)
        expect(set.body.variants[0].stock).toMatchObject({ on_hand: 4 })
      })))
  })
}
