import { matchEndpoint, RATE_LIMITS, type RateLimitedEndpoint } from "../../contract/index.js";
import { burst } from "../burst.js";
import { expectPatchesTookEffect, patchBurst } from "../concurrency-checks.js";
import { InconclusiveError, type ScenarioContext, ScenarioSetupError } from "../context.js";
import { BURST_LATENCY, countEach, defineScenario, distinct, MAX_ATTEMPTS, needsRoomFor } from "../define.js";
import { burstCreateBody, expectCreatedExactly, keepCreated } from "../read-back.js";
import type { LoadResponse } from "../recorder.js";
import { type LoadRequest, requestTo } from "../requests.js";

const SIZES = RATE_LIMITS.perKeyEndpoint;

/** A request counted in the endpoint's bucket, with no lasting effect beyond a create. */
async function bucketRequest(ctx: ScenarioContext, endpoint: RateLimitedEndpoint): Promise<LoadRequest> {
  switch (endpoint) {
    case "createAgent":
      return requestTo("createAgent", { body: burstCreateBody(ctx) });
    case "listAgents":
      return requestTo("listAgents", { query: { limit: "1" } });
    case "getAgent":
      return requestTo("getAgent", { agentId: (await ctx.createAgent(ctx.loadKey)).id });
    case "updateAgent":
      return requestTo("updateAgent", { agentId: (await ctx.createAgent(ctx.loadKey)).id, body: { bio: "under load" } });
    case "deleteAgent":
      // PROFILE §7: every authenticated request is counted whatever its outcome (a 404 too)
      return requestTo("deleteAgent", { agentId: "agt_load_missing_0000" });
  }
}

/**
 * PROFILE §7 per key and endpoint: a parallel burst of 2.5× the bucket into a window only a probe
 * has spent from → exactly the rest of the bucket admitted (the whole bucket in a fresh window);
 * a second burst mid-window → all 429 (Remaining never increases); the first request sent exactly
 * at the announced Reset succeeds; rejected creates created nothing (read back). Every 429's
 * Retry-After, Remaining 0 and body are the response checks' to judge (retry-after,
 * rate-limit-headers, status-pairing), as on every answer.
 */
async function bucketBurst(ctx: ScenarioContext, endpoint: RateLimitedEndpoint): Promise<void> {
  const size = SIZES[endpoint];
  const request = await bucketRequest(ctx, endpoint);
  const uniqueIds = endpoint === "createAgent";
  const key = ctx.loadKey;
  const created: string[] = [];
  const keep = keepCreated(ctx, key, created);
  const check = `bucket-burst ${endpoint}`;
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const { probeWindow, intoProbeWindow } = await probed(ctx, request, size, keep);
    // Update's burst: PATCHes of different fields of one agent, all read back below (PROFILE §5)
    const patches = endpoint === "updateAgent" ? patchBurst(agentOf(request), Math.ceil(size * 2.5)) : undefined;
    const first = await burst({ ...ctx.generator(key), uniqueIds }, [
      patches?.group ?? { request, count: Math.ceil(size * 2.5) },
    ]);
    first.forEach(keep);
    const admitted = first.filter((r) => r.status !== 429);
    const resets = distinct(admitted.map((r) => r.rate?.reset));
    // sent into the probe's window, every admitted answer carries its Reset: another one means the
    // window turned before the burst came (or a Reset that moves inside a window, which a fresh
    // window's burst on the next attempt judges), and the probe's one request no longer counts
    const turned = resets.length > 1 || (intoProbeWindow && admitted.length > 0 && resets[0] !== probeWindow);
    if (turned) {
      if (attempt === MAX_ATTEMPTS) throw new InconclusiveError(`the ${endpoint} window turned inside every burst`);
      continue; // start over
    }
    judgeAdmitted(ctx, endpoint, first, intoProbeWindow);
    if (patches) {
      const read = await ctx.client(key).getAgent(agentOf(request));
      if (read.data) expectPatchesTookEffect(patches.fields, first, read.data, (...failure) => ctx.fail(...failure));
    }
    const reset = (first.find((r) => r.status === 429) ?? first[0])?.rate?.reset;
    if (reset === undefined) throw new ScenarioSetupError(`the ${endpoint} burst carried no X-RateLimit-Reset`);

    // mid-window, the bucket is still empty: Remaining never goes back up inside a window (time
    // left of it on the service's clock, which Reset is read on: not this machine's)
    if (ctx.windowLeftMs(reset) > 200) {
      const second = await burst({ ...ctx.generator(key), uniqueIds }, [{ request, count: Math.ceil(size / 2) }]);
      second.forEach(keep);
      for (const r of second.filter((x) => x.rate?.reset === reset))
        ctx.recorder.expect(
          r.status === 429,
          "limits.endpoint-bucket",
          check,
          `no ${endpoint} admitted mid-window once ${size} were`,
          () => `${r.status}`,
          r.requestId,
        );
    }

    // sent exactly at the announced Reset (never paced, never retried): admitted. Meanwhile the
    // creates' agents go (the read-back below counts only agents no 201 answered): Delete's bucket
    // is not Create's, and after the reset their deletes would wait out a Delete window of their own
    // (their failure is thrown once the request at Reset has gone)
    const deleting = endpoint === "createAgent" ? ctx.deleteMade(SIZES.deleteAgent) : undefined;
    deleting?.catch(() => {});
    await ctx.waitForReset(reset);
    const atReset = await ctx.single(key, request);
    await deleting;
    keep(atReset);
    ctx.recorder.expect(
      atReset.status !== 429,
      "limits.recovery",
      check,
      `the first ${endpoint} sent at the announced X-RateLimit-Reset (${reset}) is admitted`,
      () => `${atReset.status} ${atReset.code ?? ""} (sent ${Date.now() - reset * 1000} ms after it)`,
      atReset.requestId,
    );
    break;
  }
  if (endpoint === "createAgent") await expectCreatedExactly(ctx, key, created, "limits.429");
}

/**
 * The probe opens a window (or finds one open): when it says the bucket holds all but the probe,
 * with half a window surely left, the burst goes into that window at once; else this waits for the
 * window's end (the next starts full). Waiting every time cost a window a burst.
 */
async function probed(ctx: ScenarioContext, request: LoadRequest, size: number, keep: (r: LoadResponse) => void) {
  const probe = await ctx.single(ctx.loadKey, request);
  keep(probe);
  const probeWindow = probe.rate?.reset;
  const intoProbeWindow =
    probe.status !== 429 &&
    probe.rate?.remaining === size - 1 &&
    probeWindow !== undefined &&
    ctx.windowLeftMs(probeWindow) >= ctx.target.windowSeconds * 500;
  if (!intoProbeWindow) await ctx.waitForReset(probeWindow);
  return { probeWindow, intoProbeWindow };
}

/** A burst's admissions, all in one window: the rest of the bucket (all of it but the probe's one when `withProbe`), each with Remaining below the size. */
function judgeAdmitted(ctx: ScenarioContext, endpoint: RateLimitedEndpoint, first: readonly LoadResponse[], withProbe: boolean) {
  const size = SIZES[endpoint];
  const check = `bucket-burst ${endpoint}`;
  const admitted = first.filter((r) => r.status !== 429);
  ctx.recorder.expect(
    admitted.length === (withProbe ? size - 1 : size),
    "limits.endpoint-bucket",
    check,
    withProbe
      ? `exactly ${size - 1} of ${first.length} simultaneous ${endpoint} admitted in the window one probe opened (${size} in all)`
      : `exactly ${size} of ${first.length} simultaneous ${endpoint} admitted in one window`,
    () => `${admitted.length} admitted; statuses ${countEach(first.map((r) => r.status))}`,
  );
  for (const r of admitted)
    ctx.recorder.expect(
      (r.rate?.remaining ?? size) < size,
      "limits.headers",
      check,
      `X-RateLimit-Remaining < ${size} on an admitted request`,
      () => String(r.rate?.remaining),
      r.requestId,
    );
}

/** The agent a request addresses. */
function agentOf(request: LoadRequest): string {
  const agentId = matchEndpoint(request.method, request.path)?.agentId;
  if (agentId === undefined) throw new ScenarioSetupError(`${request.method} ${request.path} addresses no agent`);
  return agentId;
}

/** Quick groups of the bucket bursts (about 3 W each): two to a file, Create (the longest) with the quota burst. */
const QUICK_GROUP = { createAgent: 1, getAgent: 2, listAgents: 2, updateAgent: 3, deleteAgent: 3 } as const;

const bucketScenario = (endpoint: RateLimitedEndpoint) =>
  defineScenario({
    id: `bucket-${endpoint}`,
    title: `${endpoint}: a parallel burst admits exactly ${SIZES[endpoint]} per window; 429s with Retry-After and Remaining 0; admitted again at Reset`,
    clauses: [
      "limits.endpoint-bucket",
      "limits.429",
      "limits.recovery",
      ...(endpoint === "createAgent" ? (["create.rejected-no-effect"] as const) : []),
      ...(endpoint === "updateAgent" ? (["update.merge-patch"] as const) : []),
    ],
    latency: { note: BURST_LATENCY, judged: true },
    rawSockets: true,
    unavailable: needsRoomFor(SIZES[endpoint]),
    quickGroup: QUICK_GROUP[endpoint],
    estimateSeconds: (t) => 3 * t.windowSeconds + 1,
    run: (ctx) => bucketBurst(ctx, endpoint),
  });

/** One scenario per key-and-endpoint bucket (PROFILE §7), in the endpoint table's order. */
export const BUCKET_BURSTS = (["createAgent", "getAgent", "listAgents", "updateAgent", "deleteAgent"] as const).map(
  bucketScenario,
);
