import type { StreamResult } from "../client/index.js";
import {
  type ClauseId,
  ENDPOINTS,
  type EndpointId,
  HEADERS,
  MESSAGE_TIMING,
  RATE_LIMITS,
  type RateLimitedEndpoint,
} from "../contract/index.js";
import type { HarnessTarget } from "../target/harness-target.js";
import { BURST_PIPELINING, burst, type LoadRequest, shoot } from "./burst.js";
import {
  dataFieldOf,
  errorCodeOf,
  InconclusiveError,
  loadTierOf,
  rateOf,
  requestIdOf,
  type ScenarioContext,
  ScenarioSetupError,
} from "./context.js";
import type { LoadResponse } from "./recorder.js";

/** One load scenario: what it verifies, when it can run, how long it takes, and the run itself. */
export interface Scenario {
  id: string;
  title: string;
  clauses: ClauseId[];
  /** runs at least one full message budget (PROFILE §5: 30 s by default) */
  long?: boolean;
  /**
   * A quick scenario (seconds on short windows) runs in verify's default run on targets the
   * harness starts (issue 10 §1), from `suites/load/quick-<group>.test.ts`: one file per group,
   * so groups run in parallel workers, each with accounts of its own.
   */
  quickGroup?: number;
  /**
   * What its latency figures measure besides the target's work, said next to them in every
   * report; `judged`: latency thresholds may judge them (false where they hold intended waits).
   */
  latency: { note: string; judged: boolean };
  /** why it cannot run against this target, or undefined */
  unavailable?(target: HarnessTarget): string | undefined;
  estimateSeconds(target: HarnessTarget): number;
  run(ctx: ScenarioContext): Promise<void>;
}

const MAX_ATTEMPTS = 3;
const SIZES = RATE_LIMITS.perKeyEndpoint;
const CAP = RATE_LIMITS.messageConcurrency;
/** "at once" for a freed slot: the server must see the closed connection within this */
const SLOT_FREE_WITHIN_MS = 500;
/** A stream's deltas: PROFILE §10 spreads ≥ 20 over about 2 s; under load we allow twice that and 2 s more. */
const SLOW_TOTAL_MAX_MS = (2 * MESSAGE_TIMING.slowModelSeconds + 2) * 1000;
/** the longest silence between two deltas of a mock-slow stream, under load */
const SLOW_GAP_MAX_MS = MESSAGE_TIMING.slowModelSeconds * 1000;
/** The budget error may come this late, at most ("at the budget, not long after") */
const budgetSlackMs = (target: HarnessTarget) => 2000 + target.messageTimeoutSeconds * 50;

const needsReference = (target: HarnessTarget) =>
  target.referenceFaults ? undefined : "needs --reference-faults (a target with the PROFILE §10 mock models)";

/**
 * A burst of 2.5× an endpoint bucket must meet that bucket, not the account tier: the load
 * account (--load-key) with a tier of at least 3× the bucket, or the main key with a --tier
 * that large. A reference target the harness starts has such an account.
 */
function needsRoomFor(bucket: number) {
  return (target: HarnessTarget): string | undefined => {
    const room = bucket * 3;
    const tier = loadTierOf(target);
    if (tier !== undefined)
      return tier >= room ? undefined : `needs a tier of at least ${room}: give --load-key with --load-tier`;
    // a deployment's unknown tier could mask the bucket and read as a finding
    return target.keys.load || target.kind !== "external"
      ? undefined
      : `needs --load-key (an account with a tier of at least ${room}, e.g. enterprise) or --tier ≥ ${room} for the main key`;
  };
}

const label = (r: LoadResponse) => `${r.method} ${new URL(r.url).pathname}`;
const distinct = <T>(xs: T[]) => [...new Set(xs)];
const histogram = (xs: (string | number)[]) => {
  const out: Record<string, number> = {};
  for (const x of xs) out[String(x)] = (out[String(x)] ?? 0) + 1;
  return JSON.stringify(out);
};

/** PROFILE §7: a 429 RATE_LIMIT_EXCEEDED from an empty bucket: Retry-After integer ≥ 1, Remaining 0. */
function expectEmptyBucket429(ctx: ScenarioContext, r: LoadResponse, check: string): void {
  const code = errorCodeOf(r);
  ctx.recorder.expect(
    code === "RATE_LIMIT_EXCEEDED",
    "limits.429",
    check,
    `${label(r)}: 429 RATE_LIMIT_EXCEEDED`,
    () => `${r.status} ${code}`,
    requestIdOf(r),
  );
  const retryAfter = r.headers[HEADERS.retryAfter];
  ctx.recorder.expect(
    /^[0-9]+$/.test(retryAfter ?? "") && Number(retryAfter) >= 1,
    "limits.429",
    check,
    "Retry-After: integer seconds ≥ 1",
    () => String(retryAfter),
    requestIdOf(r),
  );
  ctx.recorder.expect(
    rateOf(r)?.remaining === 0,
    "limits.429",
    check,
    "X-RateLimit-Remaining: 0 on a 429 from an empty bucket",
    () => String(r.headers[HEADERS.remaining]),
    requestIdOf(r),
  );
}

/* ------------------------------------------------------------------ per-endpoint buckets */

/** A request counted in the endpoint's bucket, with no lasting effect beyond a create. */
async function bucketRequest(
  ctx: ScenarioContext,
  endpoint: RateLimitedEndpoint,
): Promise<LoadRequest & { uniqueIds?: boolean }> {
  switch (endpoint) {
    case "createAgent":
      return { method: "POST", path: "/agents", body: { name: `${ctx.name("burst")}-[<id>]` }, uniqueIds: true };
    case "listAgents":
      return { method: "GET", path: "/agents?limit=1" };
    case "getAgent":
      return { method: "GET", path: `/agents/${(await ctx.createAgent(ctx.loadKey)).id}` };
    case "updateAgent":
      return { method: "PATCH", path: `/agents/${(await ctx.createAgent(ctx.loadKey)).id}`, body: { bio: "under load" } };
    case "deleteAgent":
      // PROFILE §7: every authenticated request is counted whatever its outcome (a 404 too)
      return { method: "DELETE", path: "/agents/agt_load_missing_0000" };
  }
}

/**
 * PROFILE §7 per key and endpoint: the moment a window opens, a parallel burst of 2.5× the
 * bucket → exactly its size admitted, the rest 429 with Retry-After and Remaining 0; a second
 * burst mid-window → all 429 (Remaining never increases); the first request sent exactly at
 * the announced Reset succeeds; rejected creates created nothing (read back).
 */
async function bucketBurst(ctx: ScenarioContext, endpoint: RateLimitedEndpoint): Promise<void> {
  const size = SIZES[endpoint];
  const shape = await bucketRequest(ctx, endpoint);
  const { uniqueIds, ...request } = shape;
  const key = ctx.loadKey;
  const created: string[] = [];
  const keepCreated = (r: LoadResponse) => {
    const id = dataFieldOf(r, ctx.target.idField);
    if (r.status === 201 && typeof id === "string") {
      created.push(id);
      ctx.track(key, id);
    }
  };
  const check = `bucket-burst ${endpoint}`;
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    // open a window and wait for its end: the next window starts full
    const probe = await ctx.single(key, request);
    keepCreated(probe);
    await ctx.waitForReset(rateOf(probe)?.reset);
    const first = await burst({ ...ctx.generator(key), uniqueIds: uniqueIds ?? false }, [
      { request, count: Math.ceil(size * 2.5) },
    ]);
    first.forEach(keepCreated);
    const resets = distinct(first.filter((r) => r.status !== 429).map((r) => rateOf(r)?.reset));
    if (resets.length > 1) {
      if (attempt === MAX_ATTEMPTS) throw new InconclusiveError(`the ${endpoint} window turned inside every burst`);
      continue; // the window turned inside the burst: start over
    }
    const admitted = first.filter((r) => r.status !== 429);
    ctx.recorder.expect(
      admitted.length === size,
      "limits.endpoint-bucket",
      check,
      `exactly ${size} of ${first.length} simultaneous ${endpoint} admitted in one window`,
      () => `${admitted.length} admitted; statuses ${histogram(first.map((r) => r.status))}`,
    );
    for (const r of admitted)
      ctx.recorder.expect(
        (rateOf(r)?.remaining ?? size) < size,
        "limits.headers",
        check,
        `X-RateLimit-Remaining < ${size} on an admitted request`,
        () => String(r.headers[HEADERS.remaining]),
        requestIdOf(r),
      );
    for (const r of first.filter((x) => x.status === 429)) expectEmptyBucket429(ctx, r, check);
    const reset = rateOf(first.find((r) => r.status === 429) ?? first[0]!)?.reset;
    if (reset === undefined) throw new ScenarioSetupError(`the ${endpoint} burst carried no X-RateLimit-Reset`);

    // mid-window, the bucket is still empty: Remaining never goes back up inside a window
    if (Date.now() < reset * 1000 - 1000 - 200) {
      const second = await burst({ ...ctx.generator(key), uniqueIds: uniqueIds ?? false }, [
        { request, count: Math.ceil(size / 2) },
      ]);
      second.forEach(keepCreated);
      const sameWindow = second.filter((r) => rateOf(r)?.reset === reset);
      for (const r of sameWindow) {
        ctx.recorder.expect(
          r.status === 429,
          "limits.endpoint-bucket",
          check,
          `no ${endpoint} admitted mid-window once ${size} were`,
          () => `${r.status}`,
          requestIdOf(r),
        );
        if (r.status === 429) expectEmptyBucket429(ctx, r, check);
      }
    }

    // sent exactly at the announced Reset (never paced, never retried): admitted
    await ctx.waitForReset(reset);
    const atReset = await ctx.single(key, request);
    keepCreated(atReset);
    ctx.recorder.expect(
      atReset.status !== 429,
      "limits.recovery",
      check,
      `the first ${endpoint} sent at the announced X-RateLimit-Reset (${reset}) is admitted`,
      () => `${atReset.status} ${errorCodeOf(atReset) ?? ""} (sent ${Date.now() - reset * 1000} ms after it)`,
      requestIdOf(atReset),
    );
    break;
  }
  if (endpoint === "createAgent") await expectCreatedExactly(ctx, key, created, "limits.429");
}

/**
 * Read back: the account's agents named by this scenario are exactly those answered 201, and at
 * most `unanswered` more (creates whose answer never came: admitted or not, nobody saw).
 */
async function expectCreatedExactly(
  ctx: ScenarioContext,
  key: string,
  created: string[],
  clause: ClauseId,
  unanswered = 0,
): Promise<void> {
  const prefix = `${ctx.target.runPrefix}load-${ctx.recorder.scenario}-`;
  const found: string[] = [];
  for (let page = 1; page <= 50; page++) {
    const res = await ctx.client(key).listAgents({ page, limit: 100 });
    if (res.status === 429) {
      await ctx.waitForReset(rateOf(res.exchange.response)?.reset);
      page--;
      continue;
    }
    if (res.status !== 200 || !res.data) throw new ScenarioSetupError(`reading the agents back answered ${res.status}`);
    for (const a of res.data) if (a.name.startsWith(prefix) && a.name.includes("-burst-")) found.push(a.id);
    if (!res.pagination?.hasMore) break;
  }
  const createdBursts = new Set(created);
  const extra = found.filter((id) => !createdBursts.has(id));
  // every agent answered 201 that was not deleted since is there, and nothing else but what an unanswered create made
  ctx.recorder.expect(
    extra.length <= unanswered,
    clause,
    "rejected-creates-created-nothing",
    `the agents read back are exactly the creates answered 201${unanswered ? `, and at most the ${unanswered} whose answer never came` : ""}`,
    () => `${extra.length} more agent(s) than 201 answers (${found.length} found, ${created.length} answered 201)`,
  );
  for (const id of extra) ctx.track(key, id);
}

/* ------------------------------------------------------------------ the account tier */

/** The mixed burst: more than the tier in all, each group under its endpoint's bucket. */
function tierBurstGroups(target: HarnessTarget, agentId: string): Array<{ request: LoadRequest; count: number }> {
  const tier = target.loadTiers?.tierBurst ?? 0;
  return [
    { request: { method: "GET", path: `/agents/${agentId}` }, count: Math.min(SIZES.getAgent - 5, Math.ceil(tier * 0.45)) },
    { request: { method: "GET", path: "/agents?limit=1" }, count: Math.min(SIZES.listAgents - 5, Math.ceil(tier * 0.45)) },
    {
      request: { method: "PATCH", path: `/agents/${agentId}`, body: { bio: "tier burst" } },
      count: Math.min(SIZES.updateAgent - 5, Math.ceil(tier * 0.3)),
    },
  ];
}

/**
 * PROFILE §7 per account, all endpoints together: one burst mixing Get, List and Update, more
 * than the tier but less than each endpoint bucket → exactly the tier admitted, the 429s
 * describe the tier (X-RateLimit-Limit = tier, Remaining 0); at Reset requests succeed again.
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
    await ctx.waitForReset(rateOf(probe)?.reset);
    const answers = await burst(ctx.generator(key), groups);
    const tierResets = distinct(answers.filter((r) => rateOf(r)?.limit === tier).map((r) => rateOf(r)?.reset));
    if (tierResets.length > 1) {
      if (attempt === MAX_ATTEMPTS) throw new InconclusiveError("the tier window turned inside every burst");
      continue;
    }
    const admitted = answers.filter((r) => r.status !== 429);
    ctx.recorder.expect(
      admitted.length === tier,
      "limits.tier",
      "tier-burst",
      `exactly the tier (${tier}) of ${total} mixed simultaneous requests admitted`,
      () => `${admitted.length} admitted; ${histogram(answers.map((r) => `${r.endpoint} ${r.status}`))}`,
    );
    for (const r of answers.filter((x) => x.status === 429)) {
      expectEmptyBucket429(ctx, r, "tier-burst");
      ctx.recorder.expect(
        rateOf(r)?.limit === tier,
        "limits.headers",
        "tier-burst",
        `a 429 from the empty tier describes it: X-RateLimit-Limit ${tier}`,
        () => String(r.headers[HEADERS.limit]),
        requestIdOf(r),
      );
    }
    const reset = Math.max(...answers.map((r) => rateOf(r)?.reset ?? 0));
    await ctx.waitForReset(reset);
    const after = await ctx.single(key, groups[1]!.request);
    ctx.expectAdmitted(after, "limits.recovery", "tier-burst", "a request sent at the tier's announced Reset is admitted");
    return;
  }
}

/* ------------------------------------------------------------------ the concurrency cap */

const message = (agentId: string, body: Record<string, unknown> = { text: "hold a slot" }): LoadRequest => ({
  method: "POST",
  path: `/agents/${agentId}/messages`,
  body,
});

/**
 * PROFILE §7 Concurrency with mock-slow: bursts of 11, 20 and 50 simultaneous messages →
 * exactly 10 in flight, the rest 429 RATE_LIMIT_EXCEEDED with Retry-After: 1, counted in no
 * bucket; another agent is unaffected meanwhile; the slots free when the exchanges end.
 */
async function concurrencyBursts(ctx: ScenarioContext): Promise<void> {
  const key = ctx.loadKey;
  const other = await ctx.createAgent(key);
  const agentBucket = ENDPOINTS.sendMessage.bucket.size;
  for (const n of [11, 20, 50]) {
    const slow = await ctx.createAgent(key, { modelSettings: { model: "mock-slow" } });
    const check = `concurrency-burst-${n}`;
    // sent with the burst: while one agent's slots are full, another agent answers
    const [answers, otherAnswer] = await Promise.all([
      burst(ctx.generator(key), [{ request: message(slow.id), count: n }]),
      ctx.single(key, message(other.id, { text: "unaffected" })),
    ]);
    const ok = answers.filter((r) => r.status === 200);
    const refused = answers.filter((r) => r.status === 429);
    ctx.recorder.expect(
      ok.length === CAP && refused.length === n - CAP,
      "limits.concurrency",
      check,
      `of ${n} simultaneous messages to one mock-slow agent, exactly ${CAP} answered 200 and ${n - CAP} 429`,
      () => `statuses ${histogram(answers.map((r) => r.status))}`,
    );
    for (const r of refused) {
      ctx.recorder.expect(
        errorCodeOf(r) === "RATE_LIMIT_EXCEEDED" &&
          r.headers[HEADERS.retryAfter] === String(RATE_LIMITS.concurrencyRetryAfterSeconds),
        "limits.concurrency",
        check,
        `429 RATE_LIMIT_EXCEEDED with Retry-After: ${RATE_LIMITS.concurrencyRetryAfterSeconds}`,
        () => `${errorCodeOf(r)} Retry-After ${r.headers[HEADERS.retryAfter]}`,
        requestIdOf(r),
      );
      // counted in no bucket: only the admitted ones left the agent's bucket
      const rate = rateOf(r);
      if (rate?.limit === agentBucket)
        ctx.recorder.expect(
          rate.remaining >= agentBucket - CAP,
          "limits.429-not-counted",
          check,
          `X-RateLimit-Remaining of the agent's bucket ≥ ${agentBucket - CAP} (only the ${CAP} admitted counted)`,
          () => String(rate.remaining),
          requestIdOf(r),
        );
    }
    ctx.expectAdmitted(otherAnswer, "limits.concurrency", check, "another agent answers 200 while one agent's slots are full");
    // every exchange has ended: the slots are free again, and the 429s were not counted
    // (a stream, left once admitted: its head carries the bucket, no need to wait out mock-slow)
    const after = await ctx.admitted(key, message(slow.id, { text: "slots free", stream: true }));
    ctx.expectAdmitted(after, "limits.concurrency", check, "after the held exchanges ended, a message is admitted");
    // the window of the burst is the one its refusals describe (answered at once); an admitted
    // answer leaves seconds later and may describe the next one, so it cannot tell
    const [during, now] = [rateOf(refused[0] ?? answers[0]!), rateOf(after)];
    if (during && now && during.reset === now.reset && during.limit === agentBucket && now.limit === agentBucket)
      ctx.recorder.expect(
        now.remaining === agentBucket - CAP - 1,
        "limits.429-not-counted",
        check,
        `X-RateLimit-Remaining ${agentBucket - CAP - 1} after ${CAP} admitted, ${n - CAP} refused and this one`,
        () => String(now.remaining),
        requestIdOf(after),
      );
  }
}

interface HeldStream {
  abort: AbortController;
  /** resolves at the stream's first event (it is in flight) */
  flowing: Promise<void>;
  result: Promise<StreamResult>;
}

function holdStream(ctx: ScenarioContext, key: string, agentId: string, text: string): HeldStream {
  const abort = new AbortController();
  let flowing!: () => void;
  const started = new Promise<void>((resolve) => {
    flowing = resolve;
  });
  const result = ctx
    .client(key)
    .streamMessage(agentId, { text }, { signal: abort.signal, onEvent: () => flowing() })
    .finally(() => flowing());
  return { abort, flowing: started, result };
}

/** Try a stream until admitted, for at most SLOT_FREE_WITHIN_MS: how long the slot took to free. */
async function admittedWithin(ctx: ScenarioContext, key: string, agentId: string): Promise<{ ms: number; held?: HeldStream }> {
  const start = Date.now();
  for (let attempt = 0; attempt < 50 && Date.now() - start <= SLOT_FREE_WITHIN_MS; attempt++) {
    const held = holdStream(ctx, key, agentId, "a freed slot");
    await held.flowing;
    const settled = await Promise.race([held.result.then((r) => r), Promise.resolve(undefined)]);
    if (settled === undefined || settled.status === 200) return { ms: Date.now() - start, held };
    await new Promise((r) => setTimeout(r, 10));
  }
  return { ms: Date.now() - start };
}

/**
 * PROFILE §7 "a slot frees when its exchange ends … client gone": with ten streams in
 * flight, a client that goes away frees its slot at once; ten clients going away at once
 * free ten slots at once.
 */
async function slotRelease(ctx: ScenarioContext): Promise<void> {
  const key = ctx.loadKey;
  const slow = await ctx.createAgent(key, { modelSettings: { model: "mock-slow" } });
  const held = Array.from({ length: CAP }, (_, i) => holdStream(ctx, key, slow.id, `slot ${i}`));
  await Promise.all(held.map((h) => h.flowing));
  const full = await ctx.single(key, message(slow.id));
  ctx.recorder.expect(
    full.status === 429,
    "limits.concurrency",
    "slot-release",
    `with ${CAP} streams in flight the next message → 429`,
    () => `${full.status}`,
    requestIdOf(full),
  );

  held[0]!.abort.abort();
  const one = await admittedWithin(ctx, key, slow.id);
  ctx.recorder.expect(
    one.held !== undefined,
    "limits.concurrency",
    "slot-release",
    `a client that goes away frees its slot at once (admitted within ${SLOT_FREE_WITHIN_MS} ms)`,
    () => `still refused after ${one.ms} ms`,
  );
  const live = [...held.slice(1), ...(one.held ? [one.held] : [])];
  for (const h of live) h.abort.abort();
  const many = await admittedWithin(ctx, key, slow.id);
  ctx.recorder.expect(
    many.held !== undefined,
    "limits.concurrency",
    "slot-release",
    `${live.length} clients going away at once free their slots at once (admitted within ${SLOT_FREE_WITHIN_MS} ms)`,
    () => `still refused after ${many.ms} ms`,
  );
  many.held?.abort.abort();
  if (many.held) {
    // every slot is free: ten streams at once are all admitted
    await admittedWithin(ctx, key, slow.id).then((x) => x.held?.abort.abort());
    const again = await burst(ctx.generator(key), [
      { request: message(slow.id, { text: "all slots", stream: true }), count: CAP },
    ]);
    ctx.recorder.expect(
      again.every((r) => r.status === 200),
      "limits.concurrency",
      "slot-release",
      `after ${CAP} clients went away, ${CAP} streams at once are all admitted`,
      () => histogram(again.map((r) => r.status)),
    );
  }
  await Promise.allSettled([...held, ...live].map((h) => h.result));
}

/* ------------------------------------------------------------------ streams at the budget */

/**
 * PROFILE §5 and §7 under load, at the target's budget (30 s by default): waves of mock-slow
 * streams over several agents while ten mock-timeout streams wait out the budget. Every slow
 * stream opens, delivers ≥ 20 deltas without a long stall and ends with `done`; every timeout
 * stream gets `event: error` AGENT_UNAVAILABLE at the budget (not long after) and a comment at
 * least every 15 s while silent; then its slots are free.
 */
async function streamsAtBudget(ctx: ScenarioContext): Promise<void> {
  const key = ctx.loadKey;
  const budgetMs = ctx.target.messageTimeoutSeconds * 1000;
  const slowAgents = await Promise.all([0, 1, 2].map(() => ctx.createAgent(key, { modelSettings: { model: "mock-slow" } })));
  const silent = await ctx.createAgent(key, { modelSettings: { model: "mock-timeout" } });
  const client = ctx.client(key);
  const startedAt = Date.now();
  let waves = 0;
  const wave = () => {
    waves++;
    return Promise.all(
      slowAgents.flatMap((a) =>
        Array.from({ length: CAP }, (_, i) => client.streamMessage(a.id, { text: `wave ${waves} ${i}` })),
      ),
    ).then((streams) => {
      for (const s of streams) judgeSlowStream(ctx, s);
    });
  };
  // the silent streams start while the first wave is in flight: their budgets run under load
  let running = wave();
  await ctx.until(Date.now() + 200);
  const timeouts = Array.from({ length: CAP }, (_, i) => client.streamMessage(silent.id, { text: `wait ${i}` }));
  // waves follow each other until the budget streams end
  let budgetOver = false;
  void Promise.allSettled(timeouts).then(() => {
    budgetOver = true;
  });
  const perAgentWaves = ctx.target.windowSeconds <= 5 ? Number.POSITIVE_INFINITY : ENDPOINTS.sendMessage.bucket.size / CAP - 1;
  const deadline = startedAt + ctx.target.messageTimeoutSeconds * 1000 + budgetSlackMs(ctx.target) + 5000;
  for (;;) {
    await running;
    if (budgetOver || waves >= perAgentWaves || Date.now() > deadline || ctx.signal.aborted) break;
    running = wave();
  }
  const timedOut = await Promise.all(timeouts);
  for (const s of timedOut) judgeBudgetStream(ctx, s, budgetMs);
  // the budget freed every slot of the silent agent
  const next = (await ctx.admitted(key, message(silent.id, { text: "after the budget", stream: true }))).status;
  ctx.recorder.expect(
    next === 200,
    "limits.concurrency",
    "streams-at-budget",
    "after the budget ended ten silent exchanges, a message to the same agent is admitted",
    () => String(next),
  );
  if (!Number.isFinite(perAgentWaves) && waves < 2)
    ctx.fail("message.stream", "streams-at-budget", "streams ran in waves while the budget ran", `${waves} wave(s)`);
}

function recordMs(h: { recordValue(v: number): void }, ms: number): void {
  h.recordValue(Math.max(1, Math.round(ms * 1000)));
}

/**
 * A stream that did not open (200 text/event-stream) is a finding under `clause`; one that did
 * has its time to first byte and how it ended (an error event counts as an error) recorded.
 */
function streamOpened(ctx: ScenarioContext, s: StreamResult, clause: ClauseId, check: string, model: string): boolean {
  if (s.status !== 200) {
    const received = `${s.status} ${s.error?.code ?? ""}`;
    ctx.fail(clause, check, `a ${model} stream opens (200 text/event-stream)`, received, s.exchange.requestId);
    return false;
  }
  const streams = ctx.recorder.streams;
  recordMs(streams.ttfb, s.exchange.receivedAt - s.exchange.sentAt);
  streams.ended[s.error ? "error" : s.done ? "done" : "neither"]++;
  return true;
}

function judgeSlowStream(ctx: ScenarioContext, s: StreamResult): void {
  const streams = ctx.recorder.streams;
  const check = "stream-under-load";
  const rid = s.exchange.requestId;
  if (!streamOpened(ctx, s, "message.stream", check, "mock-slow")) return;
  const deltas = s.events.filter((e) => e.event === "delta");
  if (deltas[0]) recordMs(streams.firstDelta, deltas[0].atMs);
  let maxGap = 0;
  for (let i = 1; i < deltas.length; i++) {
    const gap = deltas[i]!.atMs - deltas[i - 1]!.atMs;
    maxGap = Math.max(maxGap, gap);
    recordMs(streams.gap, gap);
  }
  const end = s.events.at(-1);
  if (end) recordMs(streams.total, end.atMs);
  ctx.recorder.expect(
    s.done !== undefined && s.done.text === s.text,
    "message.stream",
    check,
    "every stream ends with done whose text is the joined deltas",
    () =>
      s.done
        ? "done.text differs from the deltas"
        : `ended with ${end?.event ?? "nothing"}${s.transportError ? ` (${s.transportError})` : ""}`,
    rid,
  );
  ctx.recorder.expect(
    deltas.length >= MESSAGE_TIMING.slowModelMinDeltas,
    "reference.mock-models",
    check,
    `mock-slow streams ≥ ${MESSAGE_TIMING.slowModelMinDeltas} deltas`,
    () => String(deltas.length),
    rid,
  );
  ctx.recorder.expect(
    (deltas[0]?.atMs ?? 0) <= SLOW_GAP_MAX_MS,
    "reference.mock-models",
    check,
    `a mock-slow stream's first delta within ${SLOW_GAP_MAX_MS} ms under load`,
    () => `after ${Math.round(deltas[0]?.atMs ?? 0)} ms`,
    rid,
  );
  ctx.recorder.expect(
    maxGap <= SLOW_GAP_MAX_MS,
    "reference.mock-models",
    check,
    `mock-slow deltas spread over about ${MESSAGE_TIMING.slowModelSeconds} s: no gap over ${SLOW_GAP_MAX_MS} ms under load`,
    () => `a ${Math.round(maxGap)} ms gap`,
    rid,
  );
  ctx.recorder.expect(
    (end?.atMs ?? 0) <= SLOW_TOTAL_MAX_MS,
    "reference.mock-models",
    check,
    `a mock-slow stream ends within ${SLOW_TOTAL_MAX_MS} ms under load`,
    () => `${Math.round(end?.atMs ?? 0)} ms`,
    rid,
  );
}

function judgeBudgetStream(ctx: ScenarioContext, s: StreamResult, budgetMs: number): void {
  const check = "budget-under-load";
  const rid = s.exchange.requestId;
  if (!streamOpened(ctx, s, "message.budget", check, "mock-timeout")) return;
  const errorEvent = s.events.find((e) => e.event === "error");
  const at = errorEvent?.atMs;
  ctx.recorder.expect(
    s.error?.code === "AGENT_UNAVAILABLE",
    "message.budget",
    check,
    "a silent stream ends with event: error AGENT_UNAVAILABLE",
    () => `${s.error?.code ?? "no error event"}${s.transportError ? ` (${s.transportError})` : ""}`,
    rid,
  );
  if (at !== undefined)
    ctx.recorder.expect(
      at >= budgetMs - 1000 && at <= budgetMs + budgetSlackMs(ctx.target),
      "message.budget",
      check,
      `the budget error at ${budgetMs} ms (not before, at most ${budgetSlackMs(ctx.target)} ms after)`,
      () => `at ${Math.round(at)} ms`,
      rid,
    );
  // PROFILE §5: a comment at least every 15 s while the model is silent (from the open to the error)
  const marks = [0, ...s.commentAtMs, at ?? s.exchange.durationMs];
  let longest = 0;
  for (let i = 1; i < marks.length; i++) longest = Math.max(longest, marks[i]! - marks[i - 1]!);
  ctx.recorder.expect(
    longest <= MESSAGE_TIMING.heartbeatSeconds * 1000 + 500,
    "message.heartbeat",
    check,
    `a comment line at least every ${MESSAGE_TIMING.heartbeatSeconds} s while silent`,
    () => `${Math.round(longest)} ms without one (comments at ${s.commentAtMs.map((m) => Math.round(m)).join(", ")} ms)`,
    rid,
  );
}

/* ------------------------------------------------------------------ quota */

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
  const send = message(agent.id, { text: "spend" });
  let refused: LoadResponse | undefined;
  for (let i = 0; i < 50 && !refused; i++) {
    const r = await ctx.single(key, send);
    if (r.status === 429 && errorCodeOf(r) === "RATE_LIMIT_EXCEEDED") await ctx.waitForReset(rateOf(r)?.reset);
    else if (r.status !== 200) refused = r;
  }
  if (!refused || errorCodeOf(refused) !== "INSUFFICIENT_QUOTA")
    throw new ScenarioSetupError(
      `the quota account's messages never answered INSUFFICIENT_QUOTA (${refused?.status ?? "all 200"})`,
    );
  const n = QUOTA_BURST;
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const before = await ctx.single(key, send);
    const answers = await burst(ctx.generator(key), [{ request: send, count: n }]);
    const after = await ctx.single(key, send);
    const [b, a] = [rateOf(before), rateOf(after)];
    if (!b || !a) throw new ScenarioSetupError("the quota refusals carried no X-RateLimit-*");
    for (const r of [before, ...answers, after])
      ctx.recorder.expect(
        r.status === 429 && errorCodeOf(r) === "INSUFFICIENT_QUOTA",
        "limits.quota",
        "quota-headers",
        "a spent quota → 429 INSUFFICIENT_QUOTA",
        () => `${r.status} ${errorCodeOf(r)}`,
        requestIdOf(r),
      );
    if (b.reset !== a.reset || b.limit !== a.limit) continue; // the window turned: measure again
    ctx.recorder.expect(
      a.remaining === Math.max(0, b.remaining - n - 1),
      "limits.quota",
      "quota-headers",
      `INSUFFICIENT_QUOTA is counted like any request: Remaining ${b.remaining} → ${Math.max(0, b.remaining - n - 1)} after ${n + 1} more`,
      () => String(a.remaining),
      requestIdOf(after),
    );
    ctx.recorder.expect(
      b.remaining > 0,
      "limits.quota",
      "quota-headers",
      "INSUFFICIENT_QUOTA carries the bucket's real X-RateLimit-Remaining, not 0",
      () => String(b.remaining),
      requestIdOf(before),
    );
    return;
  }
  throw new InconclusiveError("the window turned inside every quota burst");
}

/* ------------------------------------------------------------------ throughput and conformance */

/** autocannon's connections per endpoint in the throughput profile */
const THROUGHPUT_CONNECTIONS = 8;
/**
 * Each endpoint is driven this long before it is measured: whichever endpoint went first
 * otherwise carried the process's cold start (its 2xx p99 about 100 ms, the others' under 20).
 */
const WARM_UP_SECONDS = 0.5;

/**
 * Every endpoint driven flat out for a few seconds with the enterprise-tier key: latency
 * (HDR) and statuses per second, every answer through the response-level checks, no bucket
 * admitting more than its size in any window; afterwards the state is read back.
 */
async function throughput(ctx: ScenarioContext): Promise<void> {
  const key = ctx.loadKey;
  const agent = await ctx.createAgent(key);
  const seconds = Math.max(2, Math.min(4, ctx.target.windowSeconds * 1.5));
  const created: string[] = [];
  let unansweredCreates = 0;
  // each endpoint's own bucket, as the contract's endpoint table says (PROFILE §7)
  const shapes: Array<{ endpoint: EndpointId; request: LoadRequest; uniqueIds?: boolean }> = [
    { endpoint: "getAgent", request: { method: "GET", path: `/agents/${agent.id}` } },
    { endpoint: "listAgents", request: { method: "GET", path: "/agents?limit=5" } },
    { endpoint: "updateAgent", request: { method: "PATCH", path: `/agents/${agent.id}`, body: { bio: "throughput" } } },
    { endpoint: "sendMessage", request: message(agent.id, { text: "throughput" }) },
    {
      endpoint: "createAgent",
      request: { method: "POST", path: "/agents", body: { name: `${ctx.name("burst")}-[<id>]` } },
      uniqueIds: true,
    },
  ];

  for (const shape of shapes) {
    const { bucket } = ENDPOINTS[shape.endpoint];
    const clause: ClauseId = bucket.kind === "agentMessages" ? "limits.agent-bucket" : "limits.endpoint-bucket";
    const perWindow = new Map<number, number>();
    // the warm-up's answers are checked and counted in their windows like any: only their latency is set aside
    const { unanswered } = await shoot({
      ...ctx.generator(key),
      request: shape.request,
      connections: THROUGHPUT_CONNECTIONS,
      // the warm-up is carved out of the run, not added: it ends mid-window (1.5 W), as it did
      durationSeconds: seconds,
      warmUpSeconds: WARM_UP_SECONDS,
      uniqueIds: shape.uniqueIds ?? false,
      onResponse: (r) => {
        const rate = rateOf(r);
        if (r.status !== 429 && rate?.limit === bucket.size) perWindow.set(rate.reset, (perWindow.get(rate.reset) ?? 0) + 1);
        const id = dataFieldOf(r, ctx.target.idField);
        if (r.status === 201 && typeof id === "string") {
          created.push(id);
          ctx.track(key, id);
        }
        ctx.recorder.expect(
          r.status < 500,
          "status.no-5xx-on-input",
          "throughput",
          `${r.endpoint}: no 5xx under load`,
          () => `${r.status} ${errorCodeOf(r)}`,
          requestIdOf(r),
        );
      },
    });
    if (shape.endpoint === "createAgent") unansweredCreates += unanswered;
    // PROFILE §7: a bucket never admits more than its size between two refills
    if (ctx.target.windowSeconds >= 1)
      for (const [reset, count] of perWindow)
        ctx.recorder.expect(
          count <= bucket.size,
          clause,
          "throughput",
          `${shape.request.method} ${shape.request.path.split("?")[0]}: at most ${bucket.size} admitted in the window ending ${reset}`,
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

/* ------------------------------------------------------------------ the table */

/** A burst's answers: pipelined, so each one's latency includes its turn behind the others on its connection. */
const BURST_LATENCY = `pipelined bursts (${BURST_PIPELINING} requests a connection): an answer's latency includes its wait behind the others on its connection; the 429s are the burst's intended refusals`;

/** Quick groups of the bucket bursts (about 3 W each): two to a file, Create (the longest) with the quota burst. */
const BUCKET_GROUP = { createAgent: 1, getAgent: 2, listAgents: 2, updateAgent: 3, deleteAgent: 3 } as const;

export const SCENARIOS: readonly Scenario[] = [
  ...(["createAgent", "getAgent", "listAgents", "updateAgent", "deleteAgent"] as const).map(
    (endpoint): Scenario => ({
      id: `bucket-${endpoint}`,
      title: `${endpoint}: a parallel burst admits exactly ${SIZES[endpoint]} per window; 429s with Retry-After and Remaining 0; admitted again at Reset`,
      clauses: [
        "limits.endpoint-bucket",
        "limits.429",
        "limits.recovery",
        ...(endpoint === "createAgent" ? (["create.rejected-no-effect"] as const) : []),
      ],
      latency: { note: BURST_LATENCY, judged: true },
      unavailable: needsRoomFor(SIZES[endpoint]),
      quickGroup: BUCKET_GROUP[endpoint],
      estimateSeconds: (t) => 3 * t.windowSeconds + 1,
      run: (ctx) => bucketBurst(ctx, endpoint),
    }),
  ),
  {
    id: "tier-mixed",
    title: "the account tier across Get, List and Update in one burst: exactly the tier admitted",
    clauses: ["limits.tier", "limits.429", "limits.recovery"],
    latency: { note: BURST_LATENCY, judged: true },
    quickGroup: 4,
    unavailable: (t) => {
      const tier = t.loadTiers?.tierBurst;
      if (!t.keys.tierBurst || tier === undefined) return "needs --tier-burst-key and --tier-burst-tier";
      const most = tierBurstGroups(t, "").reduce((n, g) => n + g.count, 0);
      return most > tier ? undefined : `needs a --tier-burst-tier below ${most} (the Get, List and Update bursts together)`;
    },
    estimateSeconds: (t) => 2 * t.windowSeconds + 1,
    run: tierBurst,
  },
  {
    id: "concurrency-bursts",
    title: "bursts of 11, 20, 50 messages to a mock-slow agent: exactly 10 in flight, the rest 429 Retry-After: 1, uncounted",
    clauses: ["limits.concurrency", "limits.429-not-counted"],
    latency: {
      note: `the admitted messages go to mock-slow, about ${MESSAGE_TIMING.slowModelSeconds} s each on purpose (PROFILE §10); the 429s are the cap's intended refusals, pipelined (${BURST_PIPELINING} a connection): one queued behind an admitted message arrives when that message ends`,
      judged: false,
    },
    quickGroup: 5,
    unavailable: needsReference,
    estimateSeconds: () => 3 * (MESSAGE_TIMING.slowModelSeconds + 1),
    run: concurrencyBursts,
  },
  {
    id: "slot-release",
    title: "a client that goes away frees its slot at once; ten going away at once free ten",
    clauses: ["limits.concurrency"],
    latency: {
      note: "streams held open and abandoned on purpose: a message's latency is how long the harness held it; the 429s are intended (a full cap, polling for a freed slot)",
      judged: false,
    },
    quickGroup: 4,
    unavailable: needsReference,
    estimateSeconds: () => 2 * MESSAGE_TIMING.slowModelSeconds + 1,
    run: slotRelease,
  },
  {
    id: "quota-headers",
    title: "INSUFFICIENT_QUOTA under a burst is counted like any request and carries the real X-RateLimit-*",
    clauses: ["limits.quota", "limits.headers"],
    latency: {
      note: `the 429s are mostly INSUFFICIENT_QUOTA (the intended refusal), in a pipelined burst of ${QUOTA_BURST} that waits behind itself`,
      judged: true,
    },
    quickGroup: 1,
    unavailable: (t) => (quotaKeyOf(t) && t.referenceFaults ? undefined : "needs --quota-key and --reference-faults"),
    estimateSeconds: () => 2,
    run: quotaHeaders,
  },
  {
    id: "throughput",
    title: "every endpoint flat out: HDR latency, statuses per second, every answer checked, no window over its size",
    clauses: ["limits.endpoint-bucket", "limits.agent-bucket", "status.no-5xx-on-input", "create.rejected-no-effect"],
    latency: {
      note: `each endpoint flat out on ${THROUGHPUT_CONNECTIONS} connections after a ${WARM_UP_SECONDS} s warm-up (checked and in the timeline, not in these figures): once its bucket is empty most answers are 429s, answered at once; the 2xx figures are the work the target did`,
      judged: true,
    },
    unavailable: needsRoomFor(Math.max(...Object.values(SIZES))),
    estimateSeconds: (t) => 5 * Math.max(2, Math.min(4, t.windowSeconds * 1.5)) + 2,
    run: throughput,
  },
  {
    id: "streams-at-budget",
    title: "waves of mock-slow streams while ten mock-timeout streams wait out the real budget: timings, done/error, heartbeats",
    clauses: ["message.stream", "message.budget", "message.heartbeat", "limits.concurrency", "reference.mock-models"],
    long: true,
    latency: {
      note: `a message's latency is its whole stream on purpose: mock-slow about ${MESSAGE_TIMING.slowModelSeconds} s, mock-timeout the full message budget; the stream timings are the figures to read`,
      judged: false,
    },
    unavailable: needsReference,
    estimateSeconds: (t) => t.messageTimeoutSeconds + 4,
    run: streamsAtBudget,
  },
];

export const SCENARIO_IDS = SCENARIOS.map((s) => s.id);
