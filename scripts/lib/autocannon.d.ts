/** The part of autocannon's programmatic API the bench uses (the package ships no types). */
declare module "autocannon" {
  export interface Histogram {
    readonly average: number
    readonly mean: number
    readonly max: number
    readonly p50: number
    readonly p90: number
    readonly p99: number
    readonly total: number
  }
  export interface Result {
    readonly requests: Histogram
    readonly latency: Histogram
    readonly duration: number
    readonly errors: number
    readonly timeouts: number
    readonly non2xx: number
    readonly statusCodeStats: Record<string, { readonly count: number }>
  }
  export interface RawRequest {
    method?: string
    path?: string
    headers?: Record<string, string>
    body?: string
  }
  export interface Options {
    readonly url: string
    readonly connections?: number
    readonly duration?: number
    /** Stop after this many requests (instead of after `duration`). */
    readonly amount?: number
    readonly method?: string
    readonly headers?: Record<string, string>
    readonly body?: string
    readonly timeout?: number
    readonly requests?: ReadonlyArray<RawRequest & { setupRequest?: (request: RawRequest) => RawRequest }>
  }
  function autocannon(options: Options, callback: (error: Error | null, result: Result) => void): unknown
  export default autocannon
}
