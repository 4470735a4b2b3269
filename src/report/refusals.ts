import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";

/**
 * The 429s the pacing did not expect and could not prove a breach of PROFILE §7
 * (src/client/refusal.ts): each made its request wait for exactly the Retry-After it announced
 * and go again. The run says how many, per bucket, so a wait is never silent.
 */
export interface RefusalWaits {
  total: number;
  /** bucket (`<scope>/<bucket>`) → waits */
  byBucket: Record<string, number>;
  /** why each distinct wait proved nothing, as the client said it */
  reasons: string[];
}

/** The file the suites' workers append a line to per wait (in the run folder). */
export const REFUSALS_FILE = "refusals.jsonl";

const refusalRow = z.object({ bucket: z.string(), waitMs: z.number(), why: z.string() });

/** The waits of a run folder, added up; undefined when there was none. */
export function readRefusalWaits(runDir: string): RefusalWaits | undefined {
  const file = join(runDir, REFUSALS_FILE);
  if (!existsSync(file)) return undefined;
  const rows = readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => refusalRow.parse(JSON.parse(line)));
  if (rows.length === 0) return undefined;
  const byBucket: Record<string, number> = {};
  for (const r of rows) byBucket[r.bucket] = (byBucket[r.bucket] ?? 0) + 1;
  return { total: rows.length, byBucket, reasons: [...new Set(rows.map((r) => r.why))] };
}

/** One line for the terminal: how many unexpected 429s were waited out, per bucket. */
export function formatRefusalWaits(waits: RefusalWaits | undefined): string {
  if (!waits) return "";
  const buckets = Object.entries(waits.byBucket)
    .map(([bucket, n]) => `${bucket} ×${n}`)
    .join(", ");
  return `unexpected 429s: ${waits.total} waited out for their Retry-After and sent again, no finding (${buckets}); why none proved a breach: ${waits.reasons.join("; ")}\n`;
}
