import type { StreamResult } from "../../client/index.js";
import { MESSAGE_TIMING, MOCK_MODELS, RATE_LIMITS } from "../../contract/index.js";
import { InconclusiveError, type ScenarioContext } from "../context.js";
import { defineScenario, needsReference } from "../define.js";
import type { LoadRecorder } from "../recorder.js";
import { messageTo, refusedMessageTo } from "../requests.js";

const CAP = RATE_LIMITS.messageConcurrency;
/**
 * "at once" for a freed slot: the server must see the closed connection within this, plus the
 * round trips the news and the next try take far from the service (STYLE §12: measured, not loopback)
 */
const SLOT_FREE_WITHIN_MS = 500;
const freeWithinMs = (roundTripMs: number) => SLOT_FREE_WITHIN_MS + 2 * roundTripMs;
/** tries at the freed slots, spread over the allowance */
const MAX_TRIES = 50;
/**
 * tries after the allowance, when none before it came back refused by the service after it: only
 * a 429 to a try sent once the allowance had passed proves a slot still held (a try that the
 * harness's own lag or a new connection's tunnel kept from coming back in time proves nothing)
 */
const LATE_TRIES = 3;
/** the most this scenario counts in the agent's bucket and the tier: ten held, one freed slot, ten freed slots */
const COUNTED = 2 * CAP + 1;

export interface HeldStream {
  abort: AbortController;
  /** resolves at the stream's first event (it is in flight) */
  flowing: Promise<void>;
  result: Promise<StreamResult>;
  /** the stream has ended (however) */
  ended: () => boolean;
}

function holdStream(ctx: ScenarioContext, key: string, agentId: string, text: string): HeldStream {
  const abort = new AbortController();
  let flowing!: () => void;
  const started = new Promise<void>((resolve) => {
    flowing = resolve;
  });
  let ended = false;
  const result = ctx.recorder
    .streaming(ctx.client(key).streamMessage(agentId, { text }, { signal: abort.signal, onEvent: () => flowing() }))
    .finally(() => {
      ended = true;
      flowing();
    });
  return { abort, flowing: started, result, ended: () => ended };
}

/** How refilling freed slots went: those admitted and held, and whether the service still refused once its allowance had passed. */
export interface Refill {
  ms: number;
  held: HeldStream[];
  /** a try sent after the allowance came back 429: the proof that a slot was still held */
  refusedLate: boolean;
  /** what kept the last tries from an answer the verdict can use, when neither all were held nor one was refused late */
  lastFailure?: string;
}

/**
 * Open `count` streams at once, and again the refused ones, until all are admitted and held
 * together: the slots `count` clients freed by going away, each freed as soon as the service saw
 * its client go. The tries spread over `withinMs`; after it, a few more until one comes back
 * refused (the proof of a slot still held) or all are held. The admitted stay held (the caller
 * lets them go).
 */
async function fillSlots(ctx: ScenarioContext, key: string, agentId: string, count: number, withinMs: number): Promise<Refill> {
  const start = Date.now();
  const held: HeldStream[] = [];
  let refusedLate = false;
  let lastFailure: string | undefined;
  let late = 0;
  for (let attempt = 1; attempt <= MAX_TRIES + LATE_TRIES && held.length < count && !refusedLate; attempt++) {
    // the tries spread over the allowance: the service sees each client go when it sees it
    await ctx.until(start + ((attempt - 1) * withinMs) / MAX_TRIES);
    const sentAt = Date.now();
    if (sentAt - start > withinMs && ++late > LATE_TRIES) break;
    const tries = Array.from({ length: count - held.length }, (_, i) => holdStream(ctx, key, agentId, `freed slot ${i}`));
    await Promise.all(tries.map((t) => t.flowing));
    // a try that ended had ended before its `flowing` resolved (the flag is set first): held only if
    // admitted; one still open is held. A flag, not a race against a settled promise, whose outcome
    // hangs on how many promise steps the stream's result takes
    for (const t of tries) {
      if (!t.ended()) {
        held.push(t);
        continue;
      }
      const { status, error } = await t.result;
      if (status === 200) held.push(t);
      else if (status === 429 && sentAt - start > withinMs) refusedLate = true;
      else if (status !== 429) lastFailure = `${status || "no answer"}${error ? ` ${error.code}: ${error.message}` : ""}`;
    }
  }
  return { ms: Date.now() - start, held, refusedLate, ...(lastFailure ? { lastFailure } : {}) };
}

/**
 * The verdict on a refill: held all (passed), or refused after the allowance (failed); otherwise the
 * tries could not be judged (no 429 came back to a try sent after the allowance) and the scenario
 * is inconclusive, naming what kept them.
 */
export function judgeRefill(recorder: LoadRecorder, refill: Refill, count: number, requirement: string): void {
  if (refill.held.length < count && !refill.refusedLate)
    throw new InconclusiveError(
      `${requirement}: ${refill.held.length} of ${count} held after ${refill.ms} ms, and no try sent after the allowance came back refused` +
        (refill.lastFailure ? `; the last failed try: ${refill.lastFailure}` : ""),
    );
  recorder.expect(
    refill.held.length === count,
    "limits.concurrency",
    "slot-release",
    requirement,
    () => `${refill.held.length} admitted in ${refill.ms} ms; a try sent after the allowance was still refused (429)`,
  );
}

/**
 * PROFILE §7 "a slot frees when its exchange ends … client gone": with ten streams in
 * flight, a client that goes away frees its slot at once; ten clients going away at once
 * free ten slots at once.
 */
async function slotRelease(ctx: ScenarioContext): Promise<void> {
  const key = ctx.loadKey;
  const slow = await ctx.createAgent(key, { modelSettings: { model: MOCK_MODELS.slow } });
  // the agent's bucket and the account's tier have room for every stream admitted here (the refusals count nowhere)
  await ctx.withRoom(key, refusedMessageTo(slow.id), COUNTED);
  const held = Array.from({ length: CAP }, (_, i) => holdStream(ctx, key, slow.id, `slot ${i}`));
  await Promise.all(held.map((h) => h.flowing));
  const full = await ctx.single(key, messageTo(slow.id));
  // a mock-slow stream lasts about 2 s: where the next message took longer to arrive (a new
  // tunnel through a proxy, a starved machine) the streams had ended, and its admission proves nothing
  const gone = held.filter((h) => h.ended()).length;
  if (full.status !== 429 && gone)
    throw new InconclusiveError(
      `${gone} of the ${CAP} streams had ended before the next message was answered (in ${Math.round(full.latencyMs)} ms; a mock-slow stream lasts about ${MESSAGE_TIMING.slowModelSeconds} s): the slots were not all full when it came`,
    );
  ctx.recorder.expect(
    full.status === 429,
    "limits.concurrency",
    "slot-release",
    `with ${CAP} streams in flight the next message → 429`,
    () => `${full.status}`,
    full.requestId,
  );

  // the 429's round trip: how far the service is
  const withinMs = freeWithinMs(full.latencyMs);
  held[0]!.abort.abort();
  const one = await fillSlots(ctx, key, slow.id, 1, withinMs);
  judgeRefill(
    ctx.recorder,
    one,
    1,
    `a client that goes away frees its slot at once (admitted within ${SLOT_FREE_WITHIN_MS} ms and two round trips)`,
  );
  const live = [...held.slice(1), ...one.held];
  for (const h of live) h.abort.abort();
  // all ten held together again: each of the ten slots was freed (one stream admitted could be one slot, freed ten times)
  const many = await fillSlots(ctx, key, slow.id, live.length, withinMs);
  judgeRefill(
    ctx.recorder,
    many,
    live.length,
    `${live.length} clients going away at once free their ${live.length} slots at once: as many streams admitted and held together within ${SLOT_FREE_WITHIN_MS} ms and two round trips`,
  );
  for (const h of many.held) h.abort.abort();
  await Promise.allSettled([...held, ...live, ...many.held].map((h) => h.result));
}

export const SLOT_RELEASE = defineScenario({
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
});
