import type { StreamResult } from "../../client/index.js";
import { type ClauseId, MESSAGE_TIMING, MOCK_MODELS, RATE_LIMITS } from "../../contract/index.js";
import type { HarnessTarget } from "../../target/harness-target.js";
import { flagOf } from "../../target/key-roles.js";
import { loadTierOf, type ScenarioContext } from "../context.js";
import { defineScenario, needsReference } from "../define.js";
import { messageTo, refusedMessageTo } from "../requests.js";

const CAP = RATE_LIMITS.messageConcurrency;
/** A stream's deltas: PROFILE §10 spreads ≥ 20 over about 2 s; under load we allow twice that and 2 s more. */
const SLOW_TOTAL_MAX_MS = (2 * MESSAGE_TIMING.slowModelSeconds + 2) * 1000;
/** the longest silence between two deltas of a mock-slow stream, under load */
const SLOW_GAP_MAX_MS = MESSAGE_TIMING.slowModelSeconds * 1000;
/** The budget error may come this late, at most ("at the budget, not long after") */
const budgetSlackMs = (target: HarnessTarget) => 2000 + target.messageTimeoutSeconds * 50;

/** The room the streams need in one window: the silent ones, the message after the budget, two one-stream waves and a reading between. */
const LEAST_ROOM = CAP + 1 + 2 + 1;
/** and the tier before them: the four agents' creates as well */
const LEAST_TIER = LEAST_ROOM + 4;

/** A tier too small for the streams and two waves in one window cannot judge the waves: the load account's enables it. */
function unavailable(target: HarnessTarget): string | undefined {
  const tier = loadTierOf(target);
  return (
    needsReference(target) ??
    (tier !== undefined && tier < LEAST_TIER
      ? `needs a tier of at least ${LEAST_TIER}: give ${flagOf("load")} with --load-tier`
      : undefined)
  );
}

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
  const slowAgents = await Promise.all([0, 1, 2].map(() => ctx.createAgent(key, { modelSettings: { model: MOCK_MODELS.slow } })));
  const silent = await ctx.createAgent(key, { modelSettings: { model: MOCK_MODELS.timeout } });
  const client = ctx.client(key);
  // PROFILE §7: every stream counts in its agent's bucket and the account's tier. Room first for
  // the silent streams, the message after the budget and two waves of at least one stream with a
  // reading between them; the waves are then sized to the room the reading shows (a standard
  // tier of 60 holds two waves of about 20, not of 30), so that two fit in one window
  const room = (await ctx.withRoom(key, refusedMessageTo(silent.id), LEAST_ROOM)).rate.remaining;
  const waveSize = Math.min(slowAgents.length * CAP, Math.floor((room - CAP - 2) / 2));
  let waves = 0;
  const wave = () => {
    waves++;
    // round robin over the agents: none holds more than its CAP slots
    const streams = Array.from({ length: waveSize }, (_, i) =>
      ctx.recorder.streaming(client.streamMessage(slowAgents[i % slowAgents.length]!.id, { text: `wave ${waves} ${i}` })),
    );
    return Promise.all(streams).then((done) => {
      for (const s of done) judgeSlowStream(ctx, s, budgetMs);
    });
  };
  const startedAt = Date.now();
  // the silent streams start while the first wave is in flight: their budgets run under load
  let running = wave();
  await ctx.until(Date.now() + 200);
  const timeoutsSentAt = Date.now();
  const timeouts = Array.from({ length: CAP }, (_, i) =>
    ctx.recorder.streaming(client.streamMessage(silent.id, { text: `wait ${i}` })),
  );
  // waves follow each other until the budget streams end, each while the buckets have room for it
  let budgetOver = false;
  void Promise.allSettled(timeouts).then(() => {
    budgetOver = true;
  });
  const deadline = startedAt + ctx.target.messageTimeoutSeconds * 1000 + budgetSlackMs(ctx.target) + 5000;
  for (;;) {
    await running;
    if (budgetOver || Date.now() > deadline || ctx.signal.aborted) break;
    // a wave's agents' buckets and the tier: a wave and the message after the budget must fit (a
    // 429 here is counted nowhere); otherwise the next wave waits for the refill, or the budget ends first
    const reading = await ctx.single(key, refusedMessageTo(slowAgents[0]!.id));
    if ((reading.rate?.remaining ?? 0) < waveSize + 1) {
      const refill = ctx.refillAt(reading.rate?.reset);
      if (refill > timeoutsSentAt + budgetMs) break;
      running = ctx.until(refill);
      continue;
    }
    running = wave();
  }
  const timedOut = await Promise.all(timeouts);
  for (const s of timedOut) judgeBudgetStream(ctx, s, budgetMs);
  // the budget freed every slot of the silent agent
  const next = (await ctx.admitted(key, messageTo(silent.id, { text: "after the budget", stream: true }))).status;
  ctx.recorder.expect(
    next === 200,
    "limits.concurrency",
    "streams-at-budget",
    "after the budget ended ten silent exchanges, a message to the same agent is admitted",
    () => String(next),
  );
  // two waves fit the room the buckets showed, and a short window refills them while the first runs
  if (ctx.target.windowSeconds <= 5 && waves < 2)
    ctx.fail(
      "message.stream",
      "streams-at-budget",
      `streams ran in waves while the budget ran (two of ${waveSize} fit the room the buckets showed)`,
      `${waves} wave(s)`,
    );
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

/**
 * PROFILE §5: a stream past the budget ends AGENT_UNAVAILABLE, as it should. A mock-slow stream that
 * ran that long (a short budget on a starved runner or service) is judged on its first delta and its
 * gaps, not on an end or a length the budget took from it.
 */
const cutByBudget = (s: StreamResult, budgetMs: number) =>
  s.error?.code === "AGENT_UNAVAILABLE" && (s.events.at(-1)?.atMs ?? 0) >= budgetMs - 1000;

function judgeSlowStream(ctx: ScenarioContext, s: StreamResult, budgetMs: number): void {
  const streams = ctx.recorder.streams;
  const check = "stream-under-load";
  const rid = s.exchange.requestId;
  if (!streamOpened(ctx, s, "message.stream", check, MOCK_MODELS.slow)) return;
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
  if (cutByBudget(s, budgetMs)) return;
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
  if (!streamOpened(ctx, s, "message.budget", check, MOCK_MODELS.timeout)) return;
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

export const STREAMS_AT_BUDGET = defineScenario({
  id: "streams-at-budget",
  title: "waves of mock-slow streams while ten mock-timeout streams wait out the real budget: timings, done/error, heartbeats",
  clauses: ["message.stream", "message.budget", "message.heartbeat", "limits.concurrency", "reference.mock-models"],
  latency: {
    note: `a message's latency is its whole stream on purpose: mock-slow about ${MESSAGE_TIMING.slowModelSeconds} s, mock-timeout the full message budget; the stream timings are the figures to read`,
    judged: false,
  },
  chartsFirst: true,
  unavailable,
  estimateSeconds: (t) => t.messageTimeoutSeconds + 4,
  run: streamsAtBudget,
});
