import { matchEndpoint, RATE_LIMITS, type RateLimitedEndpoint } from "../../contract/index.js";
import { flagOf } from "../../target/key-roles.js";
import { burst } from "../burst.js";
import { expectPatchesTookEffect, patchBurst } from "../concurrency-checks.js";
import { AnotherClientError, InconclusiveError, type ScenarioContext, ScenarioSetupError } from "../context.js";
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
 * PROFILE §7 per key and endpoint: one probe, then a parallel burst of 2.5× the bucket into the
 * window the probe's answer described → exactly the rest of the bucket admitted, as that answer's
 * X-RateLimit-Remaining said (nothing gives a bucket room back inside a window); a second burst
 * mid-window → all 429 (Remaining never increases); the first request sent exactly at the
 * announced Reset succeeds; rejected creates created nothing (read back). Every 429's Retry-After,
 * Remaining 0 and body are the response checks' to judge (retry-after, rate-limit-headers,
 * status-pairing), as on every answer.
 *
 * Another client may hold the same key (the main key stands in when no --load-key is given): it
 * spends the bucket too, unseen. So a burst is judged against what the service said was left, and
 * only a window the probe found full but for itself shows the bucket's size. A burst admitting
 * fewer than the probe's Remaining is a finding only when the service's own count says nobody
 * else spent (its last answer's Remaining is what the probe and the burst leave), and another
 * window falls short by the same number: a service that refuses with room does it window after
 * window, while another client's spending shows in the count and varies. With no window judged in
 * MAX_ATTEMPTS the scenario is inconclusive, naming the other client: it never passes unjudged.
 */
async function bucketBurst(ctx: ScenarioContext, endpoint: RateLimitedEndpoint): Promise<void> {
  const size = SIZES[endpoint];
  const request = await bucketRequest(ctx, endpoint);
  const uniqueIds = endpoint === "createAgent";
  const key = ctx.loadKey;
  const created: string[] = [];
  const keep = keepCreated(ctx, key, created);
  /** Why each attempt judged nothing: what the reports say when none did. */
  const unjudged: string[] = [];
  /** Bursts that admitted fewer than Remaining said were left, by how many. */
  const shortfalls: number[] = [];
  /** The window (its Reset) the last burst emptied: the next probe looks for the next window's first moment. */
  let emptied: number | undefined;
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const probe = await probed(ctx, request, keep, emptied);
    emptied = undefined;
    if (!probe) {
      unjudged.push("no window had room after the first request of this run in it");
      continue;
    }
    // Update's burst: PATCHes of different fields of one agent, all read back below (PROFILE §5)
    const patches = endpoint === "updateAgent" ? patchBurst(agentOf(request), Math.ceil(size * 2.5)) : undefined;
    const first = await burst({ ...ctx.generator(key), uniqueIds }, [
      patches?.group ?? { request, count: Math.ceil(size * 2.5) },
    ]);
    first.forEach(keep);
    const refusedIn = first.flatMap((r) => (r.status === 429 && r.rate?.reset !== undefined ? [r.rate.reset] : []));
    if (refusedIn.length) emptied = Math.max(...refusedIn);
    const resets = distinct(first.filter((r) => r.status !== 429).map((r) => r.rate?.reset));
    // sent into the probe's window, every admitted answer carries its Reset: another one means the
    // window turned before the burst came (or a Reset that moves inside a window, which a fresh
    // window's burst on the next attempt judges), and what the probe said was left no longer holds
    if (resets.length > 1 || (resets.length === 1 && resets[0] !== probe.window)) {
      unjudged.push(TURNED);
      continue; // start over
    }
    // what is left after one request is at most the bucket but one: Remaining above it, said by a
    // probe that opened its window, is a defect itself; a probe sent at any moment may have been
    // counted at the end of one window and answered in the next (Remaining says what is left when
    // the answer leaves), so its Remaining of the whole bucket proves nothing
    if (probe.left >= size && !probe.opened) {
      unjudged.push(`Remaining ${probe.left} after this run's request: the window may have turned under it`);
      continue;
    }
    if (probe.opened)
      ctx.recorder.expect(
        probe.left < size,
        "limits.headers",
        `bucket-burst ${endpoint}`,
        `X-RateLimit-Remaining < ${size} on the first request of a window`,
        () => String(probe.left),
      );
    const expected = Math.min(probe.left, size - 1);
    const unjudgeable = whyUnjudgeable(first, probe.left, expected, size, shortfalls);
    if (unjudgeable) {
      unjudged.push(unjudgeable);
      continue;
    }
    judgeAdmitted(ctx, endpoint, first, expected);
    if (patches) {
      const read = await ctx.client(key).getAgent(agentOf(request));
      if (read.data) expectPatchesTookEffect(patches.fields, first, read.data, (...failure) => ctx.fail(...failure));
    }
    const reset = (first.find((r) => r.status === 429) ?? first[0])?.rate?.reset;
    if (reset === undefined) throw new ScenarioSetupError(`the ${endpoint} burst carried no X-RateLimit-Reset`);
    await afterTheWindow(ctx, endpoint, request, keep, reset);
    if (endpoint === "createAgent") await expectCreatedExactly(ctx, key, created, "limits.429");
    return;
  }
  if (endpoint === "createAgent") await expectCreatedExactly(ctx, key, created, "limits.429");
  if (unjudged.every((why) => why === TURNED)) throw new InconclusiveError(`the ${endpoint} window turned inside every burst`);
  throw new AnotherClientError(
    `the ${endpoint} bucket (${size} a window) was never seen whole in ${MAX_ATTEMPTS} windows: ${unjudged.join("; ")}. ` +
      "Another client on the same key spends it unseen, or the service counts a request more than once (one request " +
      `at a time tells them apart: the functional suite's bucket checks)${ctx.target.keys.load ? "" : `; give the load scenarios a key of their own (${flagOf("load")})`}`,
  );
}

/** An attempt whose burst met two windows: nobody else's doing, and no verdict either. */
const TURNED = "the window turned under the burst";

/**
 * Why a burst's admissions tell nothing of the bucket, when they do not: fewer admitted than the
 * probe's Remaining said were left, while the last answer's Remaining says more was counted than
 * the probe and the burst (someone else's spending, or a count of two for one); a first shortfall
 * with the service's own count agreeing (a finding when another window falls short alike:
 * `shortfalls` keeps them); or a window the probe did not find full but for itself (someone spent
 * from it before, or the service counted the probe more than once), where the size does not show.
 */
function whyUnjudgeable(
  first: readonly LoadResponse[],
  left: number,
  expected: number,
  size: number,
  shortfalls: number[],
): string | undefined {
  const admitted = first.filter((r) => r.status !== 429);
  const shortfall = expected - admitted.length;
  if (shortfall > 0) {
    // only answers describing this endpoint's bucket (the tier's may be the tightest) say its count
    const told = admitted.flatMap((r) => (r.rate?.limit === size && r.rate.remaining !== undefined ? [r.rate.remaining] : []));
    if (!told.length)
      return `${admitted.length} admitted where Remaining said ${left} were left, none of them describing the bucket`;
    const lowest = Math.min(...told);
    const others = left - admitted.length - lowest;
    if (others > 0)
      return `${admitted.length} admitted where Remaining said ${left} were left, the last of them saying ${lowest}: ${others} counted besides this run's`;
    if (!shortfalls.includes(shortfall)) {
      shortfalls.push(shortfall);
      return `${admitted.length} admitted where Remaining said ${left} were left`;
    }
  }
  if (shortfall === 0 && expected < size - 1) return `Remaining ${left} after this run's first request of the window`;
  return undefined;
}

/**
 * Once a burst emptied the window whose Reset is `reset`: mid-window, a second burst is all
 * refused (Remaining never goes back up inside a window); then the bucket admits again by the
 * announced Reset.
 */
async function afterTheWindow(
  ctx: ScenarioContext,
  endpoint: RateLimitedEndpoint,
  request: LoadRequest,
  keep: (r: LoadResponse) => void,
  reset: number,
): Promise<void> {
  const size = SIZES[endpoint];
  const check = `bucket-burst ${endpoint}`;
  // at once, while the window surely goes on (the first burst's answers just came): its answers
  // carrying the window's Reset are judged, any the next window answered are not
  const second = await burst({ ...ctx.generator(ctx.loadKey), uniqueIds: endpoint === "createAgent" }, [
    { request, count: Math.ceil(size / 2) },
  ]);
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

  // admitted again once the announced Reset has passed: requests from the earliest moment the
  // window can end (one every POLL_STEP_MS, each refusal counted nowhere) until the first is
  // admitted. A request sent once the Reset had surely passed and refused all the same is a
  // finding when its refusal still names that Reset, or when such refusals name a Reset that moves
  // within a window (a bucket that never refills: no window is counted); refused under later
  // Resets a window apart, it met new windows someone else emptied first. Meanwhile the creates' agents go (the read-back counts
  // only agents no 201 answered): Delete's bucket is not Create's, and after the reset their
  // deletes would wait out a Delete window of their own (their failure is thrown once the
  // requests at Reset have gone)
  const deleting = endpoint === "createAgent" ? ctx.deleteMade(SIZES.deleteAgent) : undefined;
  deleting?.catch(() => {});
  const { admitted, refusedAfter } = await firstOfWindowAfter(ctx, request, keep, reset);
  await deleting;
  if (!admitted && !refusedAfter.length)
    throw new InconclusiveError(
      `no ${endpoint} request was sent after the announced X-RateLimit-Reset (${reset}) had surely passed`,
    );
  const laterResets = distinct(refusedAfter.flatMap((r) => (r.rate?.reset === undefined ? [] : [r.rate.reset]))).sort(
    (x, y) => x - y,
  );
  const stillOld = refusedAfter.find((r) => r.rate?.reset === reset);
  // a window lasts W: Resets less than that apart are no windows at all (a bucket that never
  // refills, each refusal naming a moment W ahead); a window or more apart, each is a window of
  // its own that another client emptied first (at W under 2 s the two cannot be told apart)
  const step = Math.floor(ctx.target.windowSeconds);
  const moving = laterResets.some((r, i) => i > 0 && r - laterResets[i - 1]! < step);
  if (!admitted && !stillOld && !moving)
    throw new AnotherClientError(
      `the first ${endpoint} requests after the announced X-RateLimit-Reset (${reset}) met the next window already empty (its Reset ${laterResets.join(", then ")}): another client on the same key spent it first`,
    );
  const refused = stillOld ?? refusedAfter.at(-1);
  ctx.recorder.expect(
    admitted !== undefined,
    "limits.recovery",
    check,
    `a ${endpoint} admitted again once the announced X-RateLimit-Reset (${reset}) has passed`,
    () =>
      stillOld
        ? `refused ${(stillOld.receivedAt - stillOld.latencyMs - reset * 1000).toFixed(0)} ms after it, the refusal still naming that Reset`
        : `every request refused until ${Date.now() - reset * 1000} ms after it, their refusals naming a Reset that moves within a window (${laterResets.join(", ")})`,
    refused?.requestId,
  );
}

/** Between two probes that look for the first moment of a window. */
const POLL_STEP_MS = 25;
/** The most requests one look for a window's first moment sends (its span is 2 s and twice the clock's tolerance). */
const MAX_POLLS = 400;

/**
 * The probe: one request, whose answer says what is left (X-RateLimit-Remaining) and in which
 * window (X-RateLimit-Reset). A window that ends under the burst shows in the burst's answers (a
 * second Reset) and is tried again.
 *
 * After a burst emptied a window (`emptied`, its Reset), or when the probe finds no room, the probe
 * looks for the next window's first moment instead: Reset is in whole seconds, so the window may
 * end up to a second before it, and another client of the key that sends in that second opens the
 * window and spends from it first. So the probes start when the window can first have ended, one
 * every POLL_STEP_MS, each refused (a 429 is counted nowhere), until the first admitted one or the
 * Reset has surely passed.
 */
async function probed(
  ctx: ScenarioContext,
  request: LoadRequest,
  keep: (r: LoadResponse) => void,
  emptied: number | undefined,
): Promise<Probe | undefined> {
  if (emptied !== undefined) return withRoom((await firstOfWindowAfter(ctx, request, keep, emptied)).admitted, true);
  const probe = await once(ctx, request, keep);
  const found = withRoom(probe, false);
  const reset = probe.rate?.reset;
  if (found || reset === undefined) return found;
  return withRoom((await firstOfWindowAfter(ctx, request, keep, reset)).admitted, true);
}

/**
 * What a probe said: its window (X-RateLimit-Reset), what it left (X-RateLimit-Remaining), and
 * whether it was the first admitted request after the window before ended (`opened`): such a probe
 * cannot straddle two windows, so its Remaining is the new window's after one request.
 */
interface Probe {
  window: number;
  left: number;
  opened: boolean;
}

async function once(ctx: ScenarioContext, request: LoadRequest, keep: (r: LoadResponse) => void): Promise<LoadResponse> {
  const probe = await ctx.single(ctx.loadKey, request);
  keep(probe);
  return probe;
}

/**
 * Requests from the earliest moment the window whose Reset is `reset` can end, one every
 * POLL_STEP_MS, until one is admitted or the Reset has surely passed and a second more: the
 * admitted one, and the refusals of requests sent once the Reset had surely passed.
 */
async function firstOfWindowAfter(
  ctx: ScenarioContext,
  request: LoadRequest,
  keep: (r: LoadResponse) => void,
  reset: number,
): Promise<{ admitted?: LoadResponse; refusedAfter: LoadResponse[] }> {
  await ctx.until(Date.now() + ctx.windowLeftMs(reset));
  const after = ctx.refillAt(reset);
  const refusedAfter: LoadResponse[] = [];
  for (let polls = 0; polls < MAX_POLLS && (polls === 0 || Date.now() < after + 1000); polls++) {
    const probe = await once(ctx, request, keep);
    if (probe.status !== 429) return { admitted: probe, refusedAfter };
    if (probe.receivedAt - probe.latencyMs >= after) refusedAfter.push(probe);
    await ctx.until(Date.now() + POLL_STEP_MS);
  }
  return { refusedAfter };
}

/** A probe's window and what it left, when it was admitted with room after it. */
function withRoom(probe: LoadResponse | undefined, opened: boolean): Probe | undefined {
  const window = probe?.rate?.reset;
  const left = probe?.rate?.remaining;
  return probe !== undefined && probe.status !== 429 && window !== undefined && left !== undefined && left > 0
    ? { window, left, opened }
    : undefined;
}

/** A burst's admissions, all in one window: what the probe's answer said was left, each with Remaining below the size. */
function judgeAdmitted(ctx: ScenarioContext, endpoint: RateLimitedEndpoint, first: readonly LoadResponse[], left: number) {
  const size = SIZES[endpoint];
  const check = `bucket-burst ${endpoint}`;
  const admitted = first.filter((r) => r.status !== 429);
  ctx.recorder.expect(
    admitted.length === left,
    "limits.endpoint-bucket",
    check,
    left === size - 1
      ? `exactly ${left} of ${first.length} simultaneous ${endpoint} admitted in the window one probe opened (${size} in all)`
      : `exactly ${left} of ${first.length} simultaneous ${endpoint} admitted, as X-RateLimit-Remaining said after one probe`,
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
    title: `${endpoint}: a parallel burst admits exactly ${SIZES[endpoint]} per window; 429s with Retry-After and Remaining 0; admitted again once the Reset passes`,
    clauses: [
      "limits.endpoint-bucket",
      "limits.429",
      "limits.recovery",
      ...(endpoint === "createAgent" ? (["create.rejected-no-effect"] as const) : []),
      ...(endpoint === "updateAgent" ? (["update.merge-patch"] as const) : []),
    ],
    latency: { note: BURST_LATENCY, judged: true },
    rawSockets: true,
    unavailable: (target) =>
      // X-RateLimit-Reset is told in whole seconds: two windows shorter than a second can share one
      // Reset, and a burst that straddles them could not be told from one that overfills
      target.windowSeconds < 1
        ? `needs W ≥ 1 s (it is ${target.windowSeconds} s): two shorter windows can share one whole-second X-RateLimit-Reset`
        : needsRoomFor(SIZES[endpoint])(target),
    quickGroup: QUICK_GROUP[endpoint],
    estimateSeconds: (t) => 3 * t.windowSeconds + 1,
    run: (ctx) => bucketBurst(ctx, endpoint),
  });

/** One scenario per key-and-endpoint bucket (PROFILE §7), in the endpoint table's order. */
export const BUCKET_BURSTS = (["createAgent", "getAgent", "listAgents", "updateAgent", "deleteAgent"] as const).map(
  bucketScenario,
);
