import type { LaneSchedule } from "../report/plan-types.js";
import { bucketsOf, type PlanLimits } from "./buckets.js";
import type { FootprintEntry } from "./footprint.js";
import { laneFileOrder, waitsForQuotaLane } from "./lanes.js";

/**
 * The least time a run's lanes need to send their requests in the order they send them.
 *
 * Counting requests per bucket (⌈requests / size⌉ windows) assumes the requests can fill every
 * window. They cannot when a check empties a bucket on purpose: the next request counted there
 * waits for the refill, however few it is, and a lane runs its checks one after another. So each
 * lane's requests are replayed in their recorded order against buckets whose window opens at
 * their first counted request (as the reference's do; PROFILE §7 leaves the start to the
 * service), each sent as early as its buckets allow, with answers taking no time. Requests
 * counted nowhere (a 429 RATE_LIMIT_EXCEEDED, a 401) take no room; a 429 from an empty bucket
 * marks that bucket empty until its window ends. The result is still a lower bound of a paced run — nothing is sent sooner than its
 * buckets allow — and, unlike the count, it includes every wait for a refill the order forces.
 */

interface Window {
  opened: number;
  used: number;
}

/**
 * Replays one lane's requests from `startSeconds`; `handOffSeconds` is when the quota lane ends
 * (the main lane's files that wait for it start no sooner).
 */
function replay(entries: readonly FootprintEntry[], limits: PlanLimits, startSeconds: number, handOffSeconds: number) {
  const w = limits.windowSeconds;
  const windows = new Map<string, Window>();
  const waits: Record<string, number> = {};
  // a check refused by an empty bucket empties it on purpose: its counted requests are however
  // many the window had left when it began (the calibration's short window may have refilled it)
  const drains = new Set(entries.filter((e) => e.emptied !== undefined).map((e) => e.check));
  let now = startSeconds;
  for (const entry of entries) {
    if (waitsForQuotaLane(limits.needsOf?.(entry.check.split("::")[0] ?? ""))) now = Math.max(now, handOffSeconds);
    const buckets: [string, number][] = [];
    for (const [name, size] of bucketsOf(entry, limits)) if (size !== null) buckets.push([name, size]);
    if (!entry.counted) {
      const size = entry.emptied;
      if (size !== undefined)
        emptied(
          buckets.filter(([, s]) => s === size),
          windows,
          now,
          w,
        );
      continue;
    }
    const draining = drains.has(entry.check);
    // a full bucket whose window is still open holds the request until that window ends
    let refill = now;
    let waitedFor: string | undefined;
    for (const [name, size] of buckets) {
      const open = windows.get(name);
      if (!draining && open && now < open.opened + w && open.used >= size && open.opened + w > refill) {
        refill = open.opened + w;
        waitedFor = name;
      }
    }
    if (waitedFor) waits[waitedFor] = (waits[waitedFor] ?? 0) + 1;
    now = refill;
    for (const [name, size] of buckets) {
      const open = windows.get(name);
      if (!open || now >= open.opened + w) windows.set(name, { opened: now, used: 1 });
      else open.used = Math.min(size, open.used + 1);
    }
  }
  return { end: now, waits };
}

/**
 * A refused request met an empty bucket of a known size: of its buckets of that size, the fullest
 * (by the share used; several when they are as full: a tier and an endpoint bucket of one size
 * that every request there counts in) is empty until its window ends.
 */
function emptied(buckets: readonly [string, number][], windows: Map<string, Window>, now: number, w: number): void {
  const fill = ([name, size]: readonly [string, number]) => {
    const open = windows.get(name);
    return open && now < open.opened + w ? open.used / size : 0;
  };
  const fullest = Math.max(0, ...buckets.map(fill));
  for (const bucket of buckets) {
    const open = windows.get(bucket[0]);
    if (open && fullest > 0 && fill(bucket) === fullest) open.used = bucket[1];
  }
}

/**
 * Each lane's least time, side by side from the run's start: the quota lane first (the main
 * lane's last files wait for its end), requests of no lane (the end-of-run sweep) after every lane.
 */
export function scheduleLanes(entries: readonly FootprintEntry[], limits: PlanLimits): LaneSchedule[] {
  const byLane = new Map<string, FootprintEntry[]>();
  const after: FootprintEntry[] = [];
  const laned = entries.some((e) => e.lane !== undefined);
  for (const entry of entries) {
    if (laned && entry.lane === undefined) after.push(entry);
    else {
      const lane = entry.lane ?? "run";
      const list = byLane.get(lane) ?? [];
      list.push(entry);
      byLane.set(lane, list);
    }
  }
  // a calibration runs a lane's files in several workers at once; the run, one after another
  const fileOf = (e: FootprintEntry) => e.check.split("::")[0] ?? "";
  const order = laneFileOrder(limits.needsOf ?? (() => undefined));
  for (const list of byLane.values()) list.sort((a, b) => order(fileOf(a), fileOf(b)));
  const laneOrder = [...byLane.keys()].sort((a, b) => Number(b === "quota") - Number(a === "quota"));
  const lanes: LaneSchedule[] = [];
  let handOff = 0;
  for (const lane of laneOrder) {
    const { end, waits } = replay(byLane.get(lane)!, limits, 0, handOff);
    if (lane === "quota") handOff = end;
    lanes.push({ lane, seconds: end, waits });
  }
  if (after.length) {
    const start = Math.max(0, ...lanes.map((l) => l.seconds));
    const { end, waits } = replay(after, limits, start, 0);
    lanes.push({ lane: "after the lanes", seconds: end, waits });
  }
  return lanes;
}
