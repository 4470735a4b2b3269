import { MESSAGE_TIMING, MOCK_MODELS, RATE_LIMITS } from "../../contract/index.js";
import { burst } from "../burst.js";
import type { ScenarioContext } from "../context.js";
import { countEach, defineScenario, needsReference } from "../define.js";
import type { LoadResponse } from "../recorder.js";
import { BURST_PIPELINING, messageTo, refusedMessageTo } from "../requests.js";

const CAP = RATE_LIMITS.messageConcurrency;
const CAP_RETRY_AFTER = RATE_LIMITS.concurrencyRetryAfterSeconds;
/** what one burst counts after its reading: the admitted, the other agent's message, the one after */
const COUNTED_PER_BURST = CAP + 2;

/**
 * PROFILE §7 Concurrency with mock-slow: bursts of 11, 20 and 50 simultaneous messages →
 * exactly 10 in flight, the rest 429 RATE_LIMIT_EXCEEDED with Retry-After: 1, counted in no
 * bucket; another agent is unaffected meanwhile; the slots free when the exchanges end.
 *
 * Every message counts in its agent's bucket and in the account's tier (on the standard tier the
 * tier is the one with the fewest left, and the headers describe it). A reading taken just before
 * the burst, of the same two buckets, bounds every later one: each bucket loses only what is
 * counted in it and a refill only gives back, so no later reading is below the earlier one less
 * every request of the account counted meanwhile.
 */
async function concurrencyBursts(ctx: ScenarioContext): Promise<void> {
  const key = ctx.loadKey;
  const other = await ctx.createAgent(key);
  for (const n of [11, 20, 50]) {
    const slow = await ctx.createAgent(key, { modelSettings: { model: MOCK_MODELS.slow } });
    const check = `concurrency-burst-${n}`;
    /** PROFILE §7: the refusals were counted in no bucket, so an answer's Remaining is no lower than `floor` */
    const atLeast = (r: LoadResponse, floor: number, why: string) => {
      const remaining = r.rate?.remaining;
      if (remaining !== undefined)
        ctx.recorder.expect(
          remaining >= floor,
          "limits.429-not-counted",
          check,
          `X-RateLimit-Remaining ≥ ${floor}: ${why}`,
          () => String(remaining),
          r.requestId,
        );
    };
    // counted from here on: the admitted, the message to the other agent, the one after the burst
    const before = await ctx.withRoom(key, refusedMessageTo(slow.id), COUNTED_PER_BURST);
    // sent with the burst: while one agent's slots are full, another agent answers
    const [answers, otherAnswer] = await Promise.all([
      burst(ctx.generator(key), [{ request: messageTo(slow.id), count: n }]),
      ctx.single(key, messageTo(other.id, { text: "unaffected" })),
    ]);
    // admitted: answered, or ended by the budget (a short budget, a starved runner: still one of the ten in flight)
    const ok = answers.filter((r) => ctx.admittedAnswer(r));
    const refused = answers.filter((r) => r.status === 429);
    ctx.recorder.expect(
      ok.length === CAP && refused.length === n - CAP,
      "limits.concurrency",
      check,
      `of ${n} simultaneous messages to one mock-slow agent, exactly ${CAP} admitted (200, or 503 at the budget) and ${n - CAP} 429`,
      () => `statuses ${countEach(answers.map((r) => r.status))}`,
    );
    // a refusal comes while ten are in flight: they and the other agent's message are all that was counted
    const floorDuring = before.rate.remaining - CAP - 1;
    for (const r of refused) {
      // the checks judge any Retry-After (an integer ≥ 1); the cap's own value is this scenario's to know
      ctx.recorder.expect(
        r.code === "RATE_LIMIT_EXCEEDED" && r.rate?.retryAfter === CAP_RETRY_AFTER,
        "limits.concurrency",
        check,
        `429 RATE_LIMIT_EXCEEDED with Retry-After: ${CAP_RETRY_AFTER}`,
        () => `${r.code} Retry-After ${r.rate?.retryAfter}`,
        r.requestId,
      );
      atLeast(
        r,
        floorDuring,
        `${before.rate.remaining} before the burst, less the ${CAP} admitted and the other agent's message (the refusals counted in no bucket)`,
      );
    }
    ctx.expectAdmitted(otherAnswer, "limits.concurrency", check, "another agent answers 200 while one agent's slots are full");
    // every exchange has ended: the slots are free again, and the 429s were not counted
    // (a stream, left once admitted: its head carries the buckets, no need to wait out mock-slow)
    const after = await ctx.admitted(key, messageTo(slow.id, { text: "slots free", stream: true }));
    ctx.expectAdmitted(after, "limits.concurrency", check, "after the held exchanges ended, a message is admitted");
    atLeast(
      after,
      before.rate.remaining - COUNTED_PER_BURST,
      `after ${CAP} admitted, ${n - CAP} refused, the other agent's message and this one (${before.rate.remaining} before)`,
    );
  }
}

export const CONCURRENCY_BURSTS = defineScenario({
  id: "concurrency-bursts",
  title: `bursts of 11, 20, 50 messages to a mock-slow agent: exactly ${CAP} in flight, the rest 429 Retry-After: ${CAP_RETRY_AFTER}, uncounted`,
  clauses: ["limits.concurrency", "limits.429-not-counted"],
  latency: {
    note: `the admitted messages go to mock-slow, about ${MESSAGE_TIMING.slowModelSeconds} s each on purpose (PROFILE §10); the 429s are the cap's intended refusals, pipelined (${BURST_PIPELINING} a connection): one queued behind an admitted message arrives when that message ends`,
    judged: false,
  },
  quickGroup: 5,
  rawSockets: true,
  unavailable: needsReference,
  estimateSeconds: () => 3 * (MESSAGE_TIMING.slowModelSeconds + 1),
  run: concurrencyBursts,
});
