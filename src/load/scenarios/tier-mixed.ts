import { RATE_LIMITS } from "../../contract/index.js";
import type { HarnessTarget } from "../../target/harness-target.js";
import { needsKey } from "../../target/key-roles.js";
import { burst } from "../burst.js";
import { InconclusiveError, type ScenarioContext, ScenarioSetupError } from "../context.js";
import { BURST_LATENCY, countEach, defineScenario, distinct, MAX_ATTEMPTS } from "../define.js";
import { type LoadRequest, requestTo } from "../requests.js";

const SIZES = RATE_LIMITS.perKeyEndpoint;

/** The mixed burst: more than the tier in all, each group under its endpoint's bucket. */
function tierBurstGroups(target: HarnessTarget, agentId: string): Array<{ request: LoadRequest; count: number }> {
  const tier = target.loadTiers?.tierBurst ?? 0;
  return [
    { request: requestTo("getAgent", { agentId }), count: Math.min(SIZES.getAgent - 5, Math.ceil(tier * 0.45)) },
    {
      request: requestTo("listAgents", { query: { limit: "1" } }),
      count: Math.min(SIZES.listAgents - 5, Math.ceil(tier * 0.45)),
    },
    {
      request: requestTo("updateAgent", { agentId, body: { bio: "tier burst" } }),
      count: Math.min(SIZES.updateAgent - 5, Math.ceil(tier * 0.3)),
    },
  ];
}

/**
 * PROFILE §7 per account, all endpoints together: one burst mixing Get, List and Update, more
 * than the tier but less than each endpoint bucket → exactly the tier admitted, the 429s
 * describe the tier (X-RateLimit-Limit = tier); at Reset requests succeed again.
 */
async function tierBurst(ctx: ScenarioContext): Promise<void> {
  const key = ctx.target.keys.tierBurst!;
  const tier = ctx.target.loadTiers!.tierBurst!;
  const agent = await ctx.createAgent(key);
  const groups = tierBurstGroups(ctx.target, agent.id);
  const get = groups[0]!.request;
  const total = groups.reduce((n, g) => n + g.count, 0);
  if (total <= tier) throw new ScenarioSetupError(`the endpoint buckets cannot outnumber a tier of ${tier}`);
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const probe = await ctx.single(key, get);
    await ctx.waitForReset(probe.rate?.reset);
    const answers = await burst(ctx.generator(key), groups);
    if (distinct(answers.filter((r) => r.rate?.limit === tier).map((r) => r.rate?.reset)).length > 1) {
      if (attempt === MAX_ATTEMPTS) throw new InconclusiveError("the tier window turned inside every burst");
      continue;
    }
    const admitted = answers.filter((r) => r.status !== 429);
    ctx.recorder.expect(
      admitted.length === tier,
      "limits.tier",
      "tier-burst",
      `exactly the tier (${tier}) of ${total} mixed simultaneous requests admitted`,
      () => `${admitted.length} admitted; ${countEach(answers.map((r) => `${r.endpoint} ${r.status}`))}`,
    );
    // which bucket a 429 describes is this burst's to know: the checks see one answer at a time
    for (const r of answers.filter((x) => x.status === 429))
      ctx.recorder.expect(
        r.rate?.limit === tier,
        "limits.headers",
        "tier-burst",
        `a 429 from the empty tier describes it: X-RateLimit-Limit ${tier}`,
        () => String(r.rate?.limit),
        r.requestId,
      );
    const reset = Math.max(...answers.map((r) => r.rate?.reset ?? 0));
    await ctx.waitForReset(reset);
    const after = await ctx.single(key, groups[1]!.request);
    ctx.expectAdmitted(after, "limits.recovery", "tier-burst", "a request sent at the tier's announced Reset is admitted");
    return;
  }
}

export const TIER_MIXED = defineScenario({
  id: "tier-mixed",
  title: "the account tier across Get, List and Update in one burst: exactly the tier admitted",
  clauses: ["limits.tier", "limits.429", "limits.recovery"],
  latency: { note: BURST_LATENCY, judged: true },
  quickGroup: 4,
  rawSockets: true,
  unavailable: (t) => {
    const tier = t.loadTiers?.tierBurst;
    if (!t.keys.tierBurst || tier === undefined) return `${needsKey("tierBurst")} and --tier-burst-tier`;
    const most = tierBurstGroups(t, "").reduce((n, g) => n + g.count, 0);
    return most > tier ? undefined : `needs a --tier-burst-tier below ${most} (the Get, List and Update bursts together)`;
  },
  estimateSeconds: (t) => 2 * t.windowSeconds + 1,
  run: tierBurst,
});
