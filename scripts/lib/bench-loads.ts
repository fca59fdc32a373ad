/** What the bench's scenarios send: GET and create session on ours, the floor's read and write. */
import { address, API_VERSION, buyer } from "./acp-client.ts"
import type { CannonOptions } from "./bench-measure.ts"
import { API_KEY } from "./bench-setup.ts"
import { FLOW_ITEMS } from "./flow.ts"
import type { NodeProcess } from "./processes.ts"

export const authHeaders = { authorization: `Bearer ${API_KEY}`, "api-version": API_VERSION }

const createBody = JSON.stringify({ items: FLOW_ITEMS, buyer, fulfillment_address: address })
const jsonHeaders = { ...authHeaders, "content-type": "application/json" }

/** Sessions for the GET scenario, created up front (read in rotation). */
export const preCreateSessions = async (proc: NodeProcess): Promise<Array<string>> => {
  const ids: Array<string> = []
  await Promise.all(Array.from({ length: 10 }, async () => {
    while (ids.length < 500) {
      const response = await fetch(proc.baseUrl + "/checkout_sessions", {
        method: "POST",
        headers: jsonHeaders,
        body: createBody
      })
      const body = (await response.json()) as { id: string }
      if (response.status !== 201) throw new Error(`pre-creating sessions: ${response.status} ${JSON.stringify(body)}`)
      ids.push(body.id)
    }
  }))
  return ids
}

export const getSessionLoad = (ids: ReadonlyArray<string>): CannonOptions => ({
  path: "/checkout_sessions/" + ids[0],
  headers: authHeaders,
  paths: ids.map((id) => `/checkout_sessions/${id}`),
  expected: 200
})

export const createSessionLoad: CannonOptions = {
  path: "/checkout_sessions",
  method: "POST",
  headers: jsonHeaders,
  body: createBody,
  expected: 201
}

export const floorReadLoad: CannonOptions = {
  path: "/read/0",
  paths: Array.from({ length: 500 }, (_, i) => `/read/${i}`),
  expected: 200
}

/**
 * The transaction on the 500 rows in rotation: what the stack costs per write, not how fast one
 * row's lock can change hands (a single hot row holds every writer behind each commit's flush).
 */
export const floorWriteLoad: CannonOptions = {
  path: "/write/0",
  paths: Array.from({ length: 500 }, (_, i) => `/write/${i}`),
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ quantity: 1 }),
  expected: 201
}
