/**
 * The load-only faults are real: each probe sends many requests at once through
 * the public API; the clean server answers as PROFILE asks, the faulty one does not. (One at
 * a time, the faulty server answers like the clean one: that is the functional suite's view.)
 */
import { describe } from "vitest";
import { ACCOUNTS, BUDGET_SECONDS, eventually, KEYS, QUOTA, seedAgents, type TestServer, track } from "../test-support.js";
import type { Res } from "../test-support-answers.js";
import { LOAD_FAULTS, UNDER_LOAD_IN_FLIGHT } from "./load.js";
import { type FaultProbe, probesOfFaults } from "./test-probes.js";

const BUDGET_MS = BUDGET_SECONDS * 1000;
const agents = (s: TestServer, model: string, n: number) =>
  seedAgents(
    s.ctx,
    ACCOUNTS.main,
    Array.from({ length: n }, (_, i) => ({ name: `L${i}`, modelSettings: { model } })),
  );

/** `count` messages spread over agents of `model`, at most 10 per agent (the cap). */
function manyMessages(s: TestServer, model: string, count: number, body: Record<string, unknown> = { text: "hi" }) {
  const ids = agents(s, model, Math.ceil(count / 10)).map((a) => a.id);
  return Array.from({ length: count }, (_, i) => track(s.send(ids[i % ids.length]!, body)));
}

const PROBES: Record<string, FaultProbe> = {
  "bucket-check-then-count": {
    expected: 10,
    probe: async (s) => {
      const answers = await Promise.all(Array.from({ length: 15 }, () => s.call("POST", "/v1/agents", { body: { name: "R" } })));
      return answers.filter((r) => r.status === 201).length;
    },
  },
  "concurrency-check-then-acquire": {
    expected: 2,
    probe: async (s) => {
      const [id] = agents(s, "mock-timeout", 1).map((a) => a.id);
      const sent = Array.from({ length: 12 }, () => track(s.send(id!, { text: "hi" })));
      // each message is refused at once or waits with its own budget timer
      await eventually(
        () => sent.filter((m) => m.settled).length + s.clock.pendingTimers >= 12,
        "12 messages to settle or start",
      );
      const refused = sent.filter((m) => m.settled).length;
      await s.clock.advance(BUDGET_MS);
      await Promise.all(sent.map((m) => m.promise));
      return refused;
    },
  },
  "deltas-stall-under-load": {
    expected: true,
    probe: async (s) => {
      const streams = manyMessages(s, "mock-slow", UNDER_LOAD_IN_FLIGHT + 1, { text: "hi", stream: true });
      await s.clock.untilTimers(streams.length);
      await s.clock.advance(2100);
      const allDone = streams.every((m) => m.settled);
      await s.clock.advance(10_000);
      await Promise.all(streams.map((m) => m.promise));
      return allDone;
    },
  },
  "quota-refusals-counted-once-a-turn": {
    // the quota spent, then ten refusals at once and one after them: eleven more counted
    expected: 11,
    probe: async (s) => {
      const [id] = seedAgents(s.ctx, ACCOUNTS.quota, [{ name: "Q" }]).map((a) => a.id);
      for (let i = 0; i < QUOTA; i++) await s.send(id!, { text: "spend" }, KEYS.quota);
      const remaining = (r: Res) => Number(r.headers["x-ratelimit-remaining"]);
      const before = await s.send(id!, { text: "refused" }, KEYS.quota);
      await Promise.all(Array.from({ length: 10 }, () => s.send(id!, { text: "refused" }, KEYS.quota)));
      const after = await s.send(id!, { text: "refused" }, KEYS.quota);
      if (before.status !== 429 || after.status !== 429) throw new Error(`not refused: ${before.status}, ${after.status}`);
      return remaining(before) - remaining(after);
    },
  },
  "budget-late-under-load": {
    expected: true,
    probe: async (s) => {
      const waiting = manyMessages(s, "mock-timeout", UNDER_LOAD_IN_FLIGHT + 1);
      await s.clock.untilTimers(waiting.length);
      await s.clock.advance(BUDGET_MS + 100);
      const onTime = waiting.every((m) => m.settled);
      await s.clock.advance(10_000);
      await Promise.all(waiting.map((m) => m.promise));
      return onTime;
    },
  },
};

describe("faults only load reveals", () => {
  probesOfFaults({ name: "load", faults: LOAD_FAULTS }, PROBES);
});
