/**
 * The request plan of a run against a deployment as results.json records it (`plan`). The
 * results types live in src/report; src/plan, which computes the plan, imports them from here
 * (a boundary rule keeps report from importing plan).
 */

/** One bucket of PROFILE §7 the run's requests count in, with how many it will send there. */
export interface PlannedBucket {
  requests: number;
  /** its size per window; null for a tier the run was not told (PROFILE §11) */
  size: number | null;
  /** windows it needs at least: ⌈requests / size⌉; null when the size is unknown */
  windows: number | null;
}

/** One lane's least time in the order it sends its requests (src/plan/schedule.ts). */
export interface LaneSchedule {
  /** the lane ("run" for a run without lanes) */
  lane: string;
  /** when its last request is sent, from its first */
  seconds: number;
  /** how often it waits for a bucket to refill, by the bucket it waits for */
  waits: Record<string, number>;
}

/**
 * What a run will send, bucket by bucket, and the least time the target's limits allow for it.
 * Written into results.json as `plan`.
 */
export interface RunPlan {
  windowSeconds: number;
  /** the tier limit per window of each account (PROFILE §7: per account, all its keys together) */
  tierLimit: number | null;
  /** keys of the main account the per-key buckets are spread over */
  mainKeys: number;
  checks: number;
  /** requests the run will send, and how many of them count in buckets */
  requests: number;
  countedRequests: number;
  /** the busiest bucket needs this many windows; the run cannot end sooner than (windows − 1) × W */
  lowerBoundWindows: number;
  lowerBoundSeconds: number;
  /** the bucket that sets the bound */
  binding: string;
  /**
   * each lane's least time in the order it sends its requests, with the refills it must wait for:
   * the bound when it is longer than the count's (a check that empties a bucket on purpose makes
   * the next request there wait a window however few follow)
   */
  lanes?: LaneSchedule[];
  requestsByBucket: Record<string, PlannedBucket>;
  /** how the counts were found */
  source: string;
  /** filled in when the run ends */
  actualSeconds?: number;
  ratio?: number;
}
