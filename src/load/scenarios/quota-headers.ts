import type { HarnessTarget } from "../../target/harness-target.js";
import { needsKey } from "../../target/key-roles.js";
import { burst } from "../burst.js";
import { InconclusiveError, type ScenarioContext, ScenarioSetupError } from "../context.js";
import { defineScenario, MAX_ATTEMPTS } from "../define.js";
import type { LoadResponse } from "../recorder.js";
import { messageTo } from "../requests.js";

/** The load scenarios' own quota account on a reference target; on a deployment, --quota-key. */
const quotaKeyOf = (target: HarnessTarget) => target.keys.loadQuota ?? target.keys.quota;

/** simultaneous refusals in the quota burst */
const QUOTA_BURST = 20;

/**
 * PROFILE §7 Quota: INSUFFICIENT_QUOTA is counted like any request and carries the buckets'
 * real X-RateLimit-* (not forced to 0): 20 refusals at once take exactly 20 from the bucket.
 */
async function quotaHeaders(ctx: ScenarioContext): Promise<void> {
  const key = quotaKeyOf(ctx.target)!;
  const agent = await ctx.createAgent(key);
  const send = messageTo(agent.id, { text: "spend" });
  let refused: LoadResponse | undefined;
  for (let i = 0; i < 50 && !refused; i++) {
    const r = await ctx.single(key, send);
    if (r.status === 429 && r.code === "RATE_LIMIT_EXCEEDED") await ctx.waitForReset(r.rate?.reset);
    else if (r.status !== 200) refused = r;
  }
  if (refused?.code !== "INSUFFICIENT_QUOTA")
    throw new ScenarioSetupError(
      `the quota account's messages never answered INSUFFICIENT_QUOTA (${refused?.status ?? "all 200"})`,
    );
  const n = QUOTA_BURST;
  let turned = "";
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const before = await ctx.single(key, send);
    // the spending counted in the agent's bucket and the tier: a bucket without room for the burst
    // would rightly answer RATE_LIMIT_EXCEEDED, which PROFILE §3 puts before the quota's refusal
    const room = before.rate?.remaining;
    if (room !== undefined && room < n + 1) {
      turned = `before the burst: Remaining ${room}, under the ${n + 1} requests it takes`;
      if (attempt < MAX_ATTEMPTS) await ctx.waitForReset(before.rate?.reset);
      continue;
    }
    const answers = await burst(ctx.generator(key), [{ request: send, count: n }]);
    const after = await ctx.single(key, send);
    const [b, a] = [before.rate, after.rate];
    if (b?.remaining === undefined || a?.remaining === undefined)
      throw new ScenarioSetupError("the quota refusals carried no X-RateLimit-Remaining");
    // a bucket that ran out anyway (another client of the account), as its refusal's own
    // Remaining 0 shows: no verdict on this burst. One with room left is judged below
    const limited = [...answers, after].filter(
      (r) => r.status === 429 && r.code === "RATE_LIMIT_EXCEEDED" && r.rate?.remaining === 0,
    );
    if (limited.length) {
      turned = `${limited.length} of the burst's answers were RATE_LIMIT_EXCEEDED: a bucket ran out beside it`;
      if (attempt < MAX_ATTEMPTS) await ctx.waitForReset(limited.at(-1)?.rate?.reset ?? a.reset);
      continue;
    }
    for (const r of [before, ...answers, after])
      ctx.recorder.expect(
        r.status === 429 && r.code === "INSUFFICIENT_QUOTA",
        "limits.quota",
        "quota-headers",
        "a spent quota → 429 INSUFFICIENT_QUOTA",
        () => `${r.status} ${r.code}`,
        r.requestId,
      );
    if (b.reset !== a.reset || b.limit !== a.limit) {
      turned = `before: Limit ${b.limit}, Reset ${b.reset}; after, ${after.receivedAt - before.receivedAt} ms later: Limit ${a.limit}, Reset ${a.reset}`;
      // the window turned: measure again from the start of the next one, where the whole
      // measurement fits (a burst with a connection per request takes a while on a far target);
      // after the last attempt there is nothing to wait for
      if (attempt < MAX_ATTEMPTS) await ctx.waitForReset(a.reset);
      continue;
    }
    const expected = Math.max(0, b.remaining - n - 1);
    ctx.recorder.expect(
      a.remaining === expected,
      "limits.quota",
      "quota-headers",
      `INSUFFICIENT_QUOTA is counted like any request: Remaining ${b.remaining} → ${expected} after ${n + 1} more`,
      () => String(a.remaining),
      after.requestId,
    );
    ctx.recorder.expect(
      b.remaining > 0,
      "limits.quota",
      "quota-headers",
      "INSUFFICIENT_QUOTA carries the bucket's real X-RateLimit-Remaining, not 0",
      () => String(b.remaining),
      before.requestId,
    );
    return;
  }
  throw new InconclusiveError(`no quota burst fitted in one window with room in its buckets (the last: ${turned})`);
}

export const QUOTA_HEADERS = defineScenario({
  id: "quota-headers",
  title: "INSUFFICIENT_QUOTA under a burst is counted like any request and carries the real X-RateLimit-*",
  clauses: ["limits.quota", "limits.headers"],
  latency: {
    note: `the 429s are mostly INSUFFICIENT_QUOTA (the intended refusal), in a pipelined burst of ${QUOTA_BURST} that waits behind itself`,
    judged: true,
  },
  quickGroup: 1,
  rawSockets: true,
  unavailable: (t) => (quotaKeyOf(t) && t.referenceFaults ? undefined : needsKey("quota")),
  estimateSeconds: () => 2,
  run: quotaHeaders,
});
