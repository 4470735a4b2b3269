import { type ClauseId, ENDPOINTS, RATE_LIMITS } from "../../contract/index.js";
import { shoot } from "../burst.js";
import type { ScenarioContext } from "../context.js";
import { defineScenario, needsRoomFor } from "../define.js";
import { burstCreateBody, expectCreatedExactly, keepCreated } from "../read-back.js";
import { type LoadRequest, labelOf, messageTo, requestTo } from "../requests.js";

/** autocannon's connections per endpoint in the throughput profile */
const THROUGHPUT_CONNECTIONS = 8;
/**
 * Each endpoint is driven this long before it is measured: whichever endpoint went first
 * otherwise carried the process's cold start (its 2xx p99 about 100 ms, the others' under 20).
 */
const WARM_UP_SECONDS = 0.5;

/** Each endpoint's drive: 1.5 W on short windows, so a window ends inside it; 2 to 4 s in all. */
const driveSeconds = (windowSeconds: number) => Math.max(2, Math.min(4, windowSeconds * 1.5));

/**
 * Every endpoint driven flat out for a few seconds with the enterprise-tier key: latency
 * (HDR) and statuses per second, every answer through the response-level checks (a 5xx is
 * theirs to report: no-5xx-on-input), no bucket admitting more than its size in any window;
 * afterwards the state is read back.
 */
async function throughput(ctx: ScenarioContext): Promise<void> {
  const key = ctx.loadKey;
  const agent = await ctx.createAgent(key);
  const seconds = driveSeconds(ctx.target.windowSeconds);
  const created: string[] = [];
  const keep = keepCreated(ctx, key, created);
  let unansweredCreates = 0;
  const shapes: LoadRequest[] = [
    requestTo("getAgent", { agentId: agent.id }),
    requestTo("listAgents", { query: { limit: "5" } }),
    requestTo("updateAgent", { agentId: agent.id, body: { bio: "throughput" } }),
    messageTo(agent.id, { text: "throughput" }),
    requestTo("createAgent", { body: burstCreateBody(ctx) }),
  ];

  for (const request of shapes) {
    // each endpoint's own bucket, as the contract's endpoint table says (PROFILE §7)
    const { bucket } = ENDPOINTS[request.endpoint];
    const clause: ClauseId = bucket.kind === "agentMessages" ? "limits.agent-bucket" : "limits.endpoint-bucket";
    const perWindow = new Map<number, number>();
    // the warm-up's answers are checked and counted in their windows like any: only their latency is set aside
    const { unanswered } = await shoot({
      ...ctx.generator(key),
      request,
      connections: THROUGHPUT_CONNECTIONS,
      // the warm-up is carved out of the run, not added: it ends mid-window (1.5 W), as it did
      durationSeconds: seconds,
      warmUpSeconds: WARM_UP_SECONDS,
      uniqueIds: request.endpoint === "createAgent",
      onResponse: (r) => {
        const reset = r.rate?.reset;
        if (r.status !== 429 && r.rate?.limit === bucket.size && reset !== undefined)
          perWindow.set(reset, (perWindow.get(reset) ?? 0) + 1);
        keep(r);
      },
    });
    if (request.endpoint === "createAgent") unansweredCreates += unanswered;
    // PROFILE §7: a bucket never admits more than its size between two refills
    if (ctx.target.windowSeconds >= 1)
      for (const [reset, count] of perWindow)
        ctx.recorder.expect(
          count <= bucket.size,
          clause,
          "throughput",
          `${labelOf(request)}: at most ${bucket.size} admitted in the window ending ${reset}`,
          () => `${count} admitted`,
        );
    if (ctx.signal.aborted) return;
  }
  // read back: the agent holds the last update, and the creates answered 201 are all there
  const read = await ctx.client(key).getAgent(agent.id);
  ctx.recorder.expect(
    read.status !== 200 || read.data?.bio === "throughput",
    "update.merge-patch",
    "throughput",
    "after the load the agent reads back with the updates it was answered",
    () => String(read.data?.bio),
  );
  await expectCreatedExactly(ctx, key, created, "create.rejected-no-effect", unansweredCreates);
}

export const THROUGHPUT = defineScenario({
  id: "throughput",
  title: "every endpoint flat out: HDR latency, statuses per second, every answer checked, no window over its size",
  clauses: ["limits.endpoint-bucket", "limits.agent-bucket", "status.no-5xx-on-input", "create.rejected-no-effect"],
  latency: {
    note: `each endpoint flat out on ${THROUGHPUT_CONNECTIONS} connections after a ${WARM_UP_SECONDS} s warm-up (checked and in the timeline, not in these figures): once its bucket is empty most answers are 429s, answered at once; the 2xx figures are the work the target did`,
    judged: true,
    profile: true,
  },
  rawSockets: true,
  chartsFirst: true,
  unavailable: needsRoomFor(Math.max(...Object.values(RATE_LIMITS.perKeyEndpoint))),
  estimateSeconds: (t) => 5 * driveSeconds(t.windowSeconds) + 2,
  run: throughput,
});
