import { afterEach, describe, expect, test } from "vitest";
import { RateBudget, RateLimitBreach, type RefusalWait, ServiceClient } from "../../src/client/index.js";
import { RATE_LIMITS } from "../../src/contract/index.js";
import { startReferenceServer } from "../../src/target/embedded.js";
import type { StartedReference } from "../../src/target/types.js";

/**
 * A 429 the pacing did not expect is waited out (src/client/refusal.ts), yet a real PROFILE §7
 * breach is still a finding: against the reference with `create-refused-with-room`, paced creates
 * meet, window after window, a refusal the Create bucket's own last answer disproves; the first is
 * waited out (once, another client on the key could have spent the bucket unseen), the second, in
 * another window, is thrown as a finding of limits.endpoint-bucket. Against the clean reference
 * the same creates pass.
 */
const CREATES = 7;
/** a short window, so that the second window the proof needs comes within a few seconds */
const WINDOW_SECONDS = 2;
let server: StartedReference | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function pacedCreates(faults: string[], creates: number): Promise<{ statuses: number[]; waits: RefusalWait[] }> {
  server = await startReferenceServer({ windowSeconds: WINDOW_SECONDS, faults });
  const waits: RefusalWait[] = [];
  const client = new ServiceClient({
    baseUrl: server.baseUrl,
    apiKey: server.keys.keys[0]!.key,
    pacing: new RateBudget({ windowSeconds: WINDOW_SECONDS, onRefusalWait: (w) => waits.push(w) }),
    tierLimit: server.keys.accounts[0]!.tierLimit,
  });
  const statuses: number[] = [];
  try {
    // one after another: each answer is the bucket's last word before the next request
    for (let i = 0; i < creates; i++) statuses.push((await client.createAgent({ name: `refusal-${i}` })).status);
  } finally {
    await client.close();
  }
  return { statuses, waits };
}

describe("meta: a real §7 breach is still caught behind the wait for unexpected 429s", () => {
  test("clean reference: paced creates within the Create bucket all pass, no wait", async () => {
    expect(CREATES).toBeLessThanOrEqual(RATE_LIMITS.perKeyEndpoint.createAgent);
    const { statuses, waits } = await pacedCreates([], CREATES);
    expect(statuses).toEqual(Array(CREATES).fill(201));
    expect(waits).toEqual([]);
  });

  test("create-refused-with-room: the refusal, seen in two windows, is a limits.endpoint-bucket finding, not an answer to the check", async () => {
    // three windows' worth of the Create bucket: the refusal comes at the sixth of each
    const creates = 3 * RATE_LIMITS.perKeyEndpoint.createAgent;
    const error = await pacedCreates(["create-refused-with-room"], creates).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitBreach);
    expect((error as RateLimitBreach).clause).toBe("limits.endpoint-bucket");
    expect((error as Error).message).toContain("said Remaining 5 of 10");
    expect((error as Error).message).toContain("refused with the same room (5) in the window ending");
  });
});
