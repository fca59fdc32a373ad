/**
 * The memory two processes share: file-backed pages resident in both (the same physical pages,
 * found by their page frame numbers in `/proc/<pid>/pagemap`). Our server and the embedded
 * store's database process are both Node processes: the pages of the `node` binary (about 40 MB)
 * are in the RSS of each, so the sum of their RSS counts them twice. What the two use together
 * is that sum minus these pages.
 *
 * Reading frame numbers needs CAP_SYS_ADMIN (root); without it the kernel reports them as 0 and
 * this answers 0 bytes, so the figure stays the plain sum (an overestimate, never an underestimate).
 */
import { closeSync, openSync, readFileSync, readSync } from "node:fs"

const PAGE_BYTES = 4096
const ENTRY_BYTES = 8
const CHUNK_PAGES = 4096
const PRESENT = 1n << 63n
const FRAME_MASK = (1n << 55n) - 1n

/** The frame numbers of the resident pages of `pid`'s file-backed mappings. */
const residentFileFrames = (pid: number): Set<bigint> => {
  const frames = new Set<bigint>()
  const maps = readFileSync(`/proc/${pid}/maps`, "utf8").trim().split("\n")
  const pagemap = openSync(`/proc/${pid}/pagemap`, "r")
  const buffer = Buffer.alloc(CHUNK_PAGES * ENTRY_BYTES)
  try {
    for (const line of maps) {
      const [range, , , , inode, path] = line.split(/\s+/)
      if (range === undefined || inode === "0" || path === undefined || !path.startsWith("/")) continue
      const [start, end] = range.split("-").map((hex) => Number.parseInt(hex, 16) / PAGE_BYTES)
      for (let page = start!; page < end!; page += CHUNK_PAGES) {
        const count = Math.min(CHUNK_PAGES, end! - page)
        const read = readSync(pagemap, buffer, 0, count * ENTRY_BYTES, page * ENTRY_BYTES)
        for (let i = 0; i < read / ENTRY_BYTES; i++) {
          const entry = buffer.readBigUInt64LE(i * ENTRY_BYTES)
          const frame = entry & FRAME_MASK
          if ((entry & PRESENT) !== 0n && frame !== 0n) frames.add(frame)
        }
      }
    }
  } finally {
    closeSync(pagemap)
  }
  return frames
}

/** Bytes of file-backed pages resident in both processes; 0 when they cannot be read. */
export const sharedFileBytes = (a: number, b: number): number => {
  try {
    const first = residentFileFrames(a)
    let shared = 0
    for (const frame of residentFileFrames(b)) if (first.has(frame)) shared++
    return shared * PAGE_BYTES
  } catch {
    return 0
  }
}
