import type { StreamResult } from "../../client/index.js";
import { MESSAGE_TIMING, MOCK_MODELS, RATE_LIMITS } from "../../contract/index.js";
import { burst } from "../burst.js";
import type { ScenarioContext } from "../context.js";
import { countEach, defineScenario, needsReference } from "../define.js";
import { messageTo } from "../requests.js";

const CAP = RATE_LIMITS.messageConcurrency;
/**
 * "at once" for a freed slot: the server must see the closed connection within this, plus the
 * round trips the news and the next try take far from the service (STYLE §12: measured, not loopback)
 */
const SLOT_FREE_WITHIN_MS = 500;
const freeWithinMs = (roundTripMs: number) => SLOT_FREE_WITHIN_MS + 2 * roundTripMs;

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

/** Try a stream until admitted, for at most `withinMs`: how long the slot took to free. */
async function admittedWithin(
  ctx: ScenarioContext,
  key: string,
  agentId: string,
  withinMs: number,
): Promise<{ ms: number; held?: HeldStream }> {
  const start = Date.now();
  for (let attempt = 0; attempt < 50 && Date.now() - start <= withinMs; attempt++) {
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
  const slow = await ctx.createAgent(key, { modelSettings: { model: MOCK_MODELS.slow } });
  const held = Array.from({ length: CAP }, (_, i) => holdStream(ctx, key, slow.id, `slot ${i}`));
  await Promise.all(held.map((h) => h.flowing));
  const full = await ctx.single(key, messageTo(slow.id));
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
  const one = await admittedWithin(ctx, key, slow.id, withinMs);
  ctx.recorder.expect(
    one.held !== undefined,
    "limits.concurrency",
    "slot-release",
    `a client that goes away frees its slot at once (admitted within ${SLOT_FREE_WITHIN_MS} ms and two round trips)`,
    () => `still refused after ${one.ms} ms`,
  );
  const live = [...held.slice(1), ...(one.held ? [one.held] : [])];
  for (const h of live) h.abort.abort();
  const many = await admittedWithin(ctx, key, slow.id, withinMs);
  ctx.recorder.expect(
    many.held !== undefined,
    "limits.concurrency",
    "slot-release",
    `${live.length} clients going away at once free their slots at once (admitted within ${SLOT_FREE_WITHIN_MS} ms and two round trips)`,
    () => `still refused after ${many.ms} ms`,
  );
  many.held?.abort.abort();
  if (many.held) {
    // every slot is free: ten streams at once are all admitted
    await admittedWithin(ctx, key, slow.id, withinMs).then((x) => x.held?.abort.abort());
    const again = await burst(ctx.generator(key), [
      { request: messageTo(slow.id, { text: "all slots", stream: true }), count: CAP },
    ]);
    ctx.recorder.expect(
      again.every((r) => r.status === 200),
      "limits.concurrency",
      "slot-release",
      `after ${CAP} clients went away, ${CAP} streams at once are all admitted`,
      () => countEach(again.map((r) => r.status)),
    );
  }
  await Promise.allSettled([...held, ...live].map((h) => h.result));
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
