import { ENDPOINTS, MESSAGE_TIMING, MOCK_MODELS, RATE_LIMITS } from "../../contract/index.js";
import { BURST_PIPELINING, burst } from "../burst.js";
import type { ScenarioContext } from "../context.js";
import { countEach, defineScenario, needsReference } from "../define.js";
import { messageTo } from "../requests.js";

const CAP = RATE_LIMITS.messageConcurrency;
const CAP_RETRY_AFTER = RATE_LIMITS.concurrencyRetryAfterSeconds;

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
    const slow = await ctx.createAgent(key, { modelSettings: { model: MOCK_MODELS.slow } });
    const check = `concurrency-burst-${n}`;
    // sent with the burst: while one agent's slots are full, another agent answers
    const [answers, otherAnswer] = await Promise.all([
      burst(ctx.generator(key), [{ request: messageTo(slow.id), count: n }]),
      ctx.single(key, messageTo(other.id, { text: "unaffected" })),
    ]);
    const ok = answers.filter((r) => r.status === 200);
    const refused = answers.filter((r) => r.status === 429);
    ctx.recorder.expect(
      ok.length === CAP && refused.length === n - CAP,
      "limits.concurrency",
      check,
      `of ${n} simultaneous messages to one mock-slow agent, exactly ${CAP} answered 200 and ${n - CAP} 429`,
      () => `statuses ${countEach(answers.map((r) => r.status))}`,
    );
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
      // counted in no bucket: only the admitted ones left the agent's bucket
      const remaining = r.rate?.remaining;
      if (r.rate?.limit === agentBucket && remaining !== undefined)
        ctx.recorder.expect(
          remaining >= agentBucket - CAP,
          "limits.429-not-counted",
          check,
          `X-RateLimit-Remaining of the agent's bucket ≥ ${agentBucket - CAP} (only the ${CAP} admitted counted)`,
          () => String(remaining),
          r.requestId,
        );
    }
    ctx.expectAdmitted(otherAnswer, "limits.concurrency", check, "another agent answers 200 while one agent's slots are full");
    // every exchange has ended: the slots are free again, and the 429s were not counted
    // (a stream, left once admitted: its head carries the bucket, no need to wait out mock-slow)
    const after = await ctx.admitted(key, messageTo(slow.id, { text: "slots free", stream: true }));
    ctx.expectAdmitted(after, "limits.concurrency", check, "after the held exchanges ended, a message is admitted");
    // the window of the burst is the one its refusals describe (answered at once); an admitted
    // answer leaves seconds later and may describe the next one, so it cannot tell
    const [during, now] = [(refused[0] ?? answers[0])?.rate, after.rate];
    if (during?.reset !== undefined && during.reset === now?.reset && during.limit === agentBucket && now.limit === agentBucket)
      ctx.recorder.expect(
        now.remaining === agentBucket - CAP - 1,
        "limits.429-not-counted",
        check,
        `X-RateLimit-Remaining ${agentBucket - CAP - 1} after ${CAP} admitted, ${n - CAP} refused and this one`,
        () => String(now.remaining),
        after.requestId,
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
  unavailable: needsReference,
  estimateSeconds: () => 3 * (MESSAGE_TIMING.slowModelSeconds + 1),
  run: concurrencyBursts,
});
