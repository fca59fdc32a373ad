/**
 * A server entry that counts the Effect runtime's steps (`scripts/runtime-steps.ts`): every
 * instruction a fiber evaluates goes through a method of the fiber runtime named after its opcode
 * (`Success`, `OnSuccess`, `WithRuntime`, …); this wraps each of them with a counter, then starts
 * the server named by `STEPS_ENTRY` (ours, or the floor). SIGUSR1 starts counting, SIGUSR2 stops
 * and writes the counts, by opcode and the first characters of the function it runs, as JSON to
 * `STEPS_OUT`. For measurement only: the wrappers cost time of their own.
 */
import { Effect } from "effect"
import { writeFileSync } from "node:fs"

const counts = new Map<string, number>()
let counting = false

const describe = (opcode: string, instruction: any): string => {
  const body = [instruction.effect_instruction_i1, instruction.effect_instruction_i0, instruction.commit]
    .find((candidate) => typeof candidate === "function")
  if (body !== undefined) return `${opcode} ${String(body).replace(/\s+/g, " ").slice(0, 110)}`
  return opcode === "Tag" ? `${opcode} ${String(instruction.key)}` : opcode
}

const fiber: object = Effect.runSync(Effect.withFiberRuntime((fiber) => Effect.succeed(fiber)))
const runtime = Object.getPrototypeOf(fiber) as Record<string, unknown>
for (const opcode of Object.getOwnPropertyNames(runtime)) {
  const evaluate = runtime[opcode]
  if (!/^[A-Z]/.test(opcode) || typeof evaluate !== "function") continue
  runtime[opcode] = function(this: unknown, instruction: unknown) {
    if (counting) {
      const key = describe(opcode, instruction)
      counts.set(key, (counts.get(key) ?? 0) + 1)
    }
    return evaluate.call(this, instruction)
  }
}

process.on("SIGUSR1", () => {
  counts.clear()
  counting = true
})
process.on("SIGUSR2", () => {
  counting = false
  writeFileSync(process.env["STEPS_OUT"]!, JSON.stringify([...counts]))
})

await import(process.env["STEPS_ENTRY"]!)
