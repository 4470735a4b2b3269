import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { z } from "zod";
import { ENDPOINT_LIST } from "../contract/index.js";

/**
 * A run's request footprint: one line per request a check sent, with the buckets it counts in
 * (PROFILE §7). Recorded by the suites themselves (suites/support/harness.ts) during a
 * calibration run against an embedded reference, so the plan follows the suites as they change.
 */
const footprintEntrySchema = z.object({
  /** `<file>::<test full name>`, or `<file>::(setup)` for a hook's requests */
  check: z.string(),
  /** the key's role: `main#0`, `main#1` … (the main account's keys), `readOnly`, `otherAccount`, `quota` */
  key: z.string(),
  /** the account's role: `main`, `other`, `quota` */
  account: z.string(),
  /** the endpoint the request matched; absent for a path no endpoint has (it counts in the tier only) */
  endpoint: z.enum(ENDPOINT_LIST.map((ep) => ep.id)).optional(),
  /** the account lane that sent it (src/plan/lanes.ts), in a run with lanes */
  lane: z.string().optional(),
  /** Send Message: the agent, whose bucket is shared by the account's keys */
  agent: z.string().optional(),
  /**
   * PROFILE §6, §7: every authenticated request counts, except one answered 429
   * RATE_LIMIT_EXCEEDED; a 401 counts nowhere
   */
  counted: z.boolean(),
  /**
   * a 429 RATE_LIMIT_EXCEEDED from an empty bucket: that bucket's size (its `X-RateLimit-Limit`,
   * PROFILE §7), so a plan knows the request after it waits for the refill
   */
  emptied: z.number().int().positive().optional(),
});
export type FootprintEntry = z.infer<typeof footprintEntrySchema>;

export function appendFootprint(file: string, entry: FootprintEntry): void {
  appendFileSync(file, `${JSON.stringify(entry)}\n`);
}

export function readFootprint(file: string): FootprintEntry[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => footprintEntrySchema.parse(JSON.parse(line)));
}

/**
 * Which of `count` keys a check takes: a hash of its name, so a calibration run and the run it
 * plans give every check the same key, whatever order the files run in.
 */
export function keyIndexFor(checkName: string, count: number): number {
  let h = 2166136261;
  for (let i = 0; i < checkName.length; i++) h = Math.imul(h ^ checkName.charCodeAt(i), 16777619);
  return (h >>> 0) % Math.max(1, count);
}
