import { describe } from "vitest";
import type { StreamResult } from "../../src/client/index.js";
import { MESSAGE_TIMING, SLOW_REPLY_MIN_MS, SSE_CONTENT_TYPE } from "../../src/contract/index.js";
import { declareFile } from "../support/declare-file.js";
import { check, expect, expectError, expectOk, target } from "../support/harness.js";

declareFile({ sendsMessages: true });

/**
 * PROFILE §5 failure paths, reached through the §10 mock models of a reference-compatible target:
 * `mock-error` fails, `mock-timeout` spends the time budget, `mock-slow` takes about 2 s.
 */

const BUDGET_MS = target.messageTimeoutSeconds * 1000;
/** "at the budget": not clearly before it, and not long after it (generous: networks and timers are late) */
const AT_BUDGET = { earliestMs: BUDGET_MS * 0.9, latestMs: BUDGET_MS * 1.5 + 2000 };
/** PROFILE §5 heartbeat period, plus slack for delivery */
const HEARTBEAT_GAP_MS = MESSAGE_TIMING.heartbeatSeconds * 1000 + 1000;

/** A stream that never closes would hang the check: give up well past the time budget and say so. */
const closeGuard = () => AbortSignal.timeout(BUDGET_MS * 2 + 15_000);

const needsReference = (skip: (note: string) => never) => {
  if (!target.referenceFaults) skip("needs --reference-faults");
};

/** PROFILE §5: an opened stream that failed: 200 text/event-stream, an error event last, no done, then close. */
function expectStreamError(res: StreamResult, code: "MODEL_ERROR" | "AGENT_UNAVAILABLE") {
  const label = `${res.exchange.request.method} ${res.exchange.request.url}`;
  const contentType = res.exchange.response.headers["content-type"]?.split(";")[0]?.trim().toLowerCase();
  expect({ status: res.status, contentType }, label).toEqual({ status: 200, contentType: SSE_CONTENT_TYPE });
  expect(res.parseIssues, `${label}: every event parses`).toEqual([]);
  expect({ aborted: res.aborted, transportError: res.transportError }, `${label}: the server closed the stream`).toEqual({
    aborted: false,
    transportError: undefined,
  });
  const last = res.events.at(-1);
  expect(last?.event, `${label}: the error event comes last`).toBe("error");
  expect(res.events.filter((e) => e.event !== "delta").length, `${label}: one error, no done`).toBe(1);
  expect(res.error?.code, `${label}: error.code`).toBe(code);
  return last!;
}

describe("mock-error: a model failure", () => {
  check(
    ["message.model-error", "message.unavailable", "message.turn"],
    "→ 500 MODEL_ERROR; the agent turns error and answers 503 until PATCH active; the failure took no turn",
    async ({ api, agents, skip }) => {
      needsReference(skip);
      const agent = await agents.create();
      const first = expectOk(await api.sendMessage(agent.id, { text: "hello", userId: "u-error" }));
      expectOk(await api.updateAgent(agent.id, { modelSettings: { model: "mock-error" } }));

      expectError(await api.sendMessage(agent.id, { text: "fail", userId: "u-error" }), "MODEL_ERROR");
      expect(expectOk(await api.getAgent(agent.id)).status, "status after a model failure").toBe("error");
      expectError(await api.sendMessage(agent.id, { text: "still there?", userId: "u-error" }), "AGENT_UNAVAILABLE");

      expect(expectOk(await api.updateAgent(agent.id, { status: "active" })).status).toBe("active");
      expect(expectOk(await api.getAgent(agent.id)).status).toBe("active");
      expectOk(await api.updateAgent(agent.id, { modelSettings: { model: "mock-1" } }));
      const next = expectOk(await api.sendMessage(agent.id, { text: "better now", userId: "u-error" }));
      expect({ conversationId: next.conversationId, turn: next.turn }, "the failed exchange took no turn").toEqual({
        conversationId: first.conversationId,
        turn: 2,
      });
    },
  );

  check(
    ["message.model-error", "message.stream-error"],
    "streamed → event: error MODEL_ERROR, then close; the agent turns error",
    async ({ api, agents, skip }) => {
      needsReference(skip);
      const agent = await agents.create({ modelSettings: { model: "mock-error" } });
      expectStreamError(await api.streamMessage(agent.id, { text: "fail" }, { signal: closeGuard() }), "MODEL_ERROR");
      expect(expectOk(await api.getAgent(agent.id)).status, "status after a model failure").toBe("error");
    },
  );
});

describe("mock-timeout: the time budget runs out", () => {
  // one check for both ways a message meets the budget: they wait it out side by side, one budget
  // of the run's time rather than two (a deployment run pays each budget in full)
  check(
    ["message.budget", "message.turn", "message.heartbeat", "message.stream-error"],
    "→ 503 AGENT_UNAVAILABLE at the budget, the failure taking no turn; streamed → event: error AGENT_UNAVAILABLE at the budget, with SSE comments at least every 15 s meanwhile",
    async ({ api, agents, skip }) => {
      needsReference(skip);
      const agent = await agents.create();
      const silent = await agents.create({ modelSettings: { model: "mock-timeout" } });
      const first = expectOk(await api.sendMessage(agent.id, { text: "hello", userId: "u-timeout" }));
      expectOk(await api.updateAgent(agent.id, { modelSettings: { model: "mock-timeout" } }));

      const [res, streamed] = await Promise.all([
        api.sendMessage(agent.id, { text: "are you there?", userId: "u-timeout" }),
        api.streamMessage(silent.id, { text: "are you there?" }, { signal: closeGuard() }),
      ]);
      expectError(res, "AGENT_UNAVAILABLE");
      expect(res.exchange.durationMs, `answered at the ${BUDGET_MS} ms budget`).toBeGreaterThanOrEqual(AT_BUDGET.earliestMs);
      expect(res.exchange.durationMs, `answered at the ${BUDGET_MS} ms budget`).toBeLessThanOrEqual(AT_BUDGET.latestMs);

      const error = expectStreamError(streamed, "AGENT_UNAVAILABLE");
      expect(streamed.events.length, "the model said nothing before the error").toBe(1);
      expect(error.atMs, `the error event at the ${BUDGET_MS} ms budget`).toBeGreaterThanOrEqual(AT_BUDGET.earliestMs);
      expect(error.atMs, `the error event at the ${BUDGET_MS} ms budget`).toBeLessThanOrEqual(AT_BUDGET.latestMs);
      expect(streamed.comments, "at least one SSE comment while the model is silent").toBeGreaterThanOrEqual(1);
      const silence = [0, ...streamed.commentAtMs.filter((ms) => ms < error.atMs), error.atMs];
      const gaps = silence.slice(1).map((ms, i) => ms - silence[i]!);
      expect(Math.max(...gaps), `longest silence (comments at ${streamed.commentAtMs.join(", ")} ms)`).toBeLessThanOrEqual(
        HEARTBEAT_GAP_MS,
      );

      // §5 does not say a timeout leaves the agent active; make sure it is, so only the turn is tested
      expectOk(await api.updateAgent(agent.id, { status: "active", modelSettings: { model: "mock-1" } }));
      const next = expectOk(await api.sendMessage(agent.id, { text: "there you are", userId: "u-timeout" }));
      expect({ conversationId: next.conversationId, turn: next.turn }, "the timed-out exchange took no turn").toEqual({
        conversationId: first.conversationId,
        turn: 2,
      });
    },
  );
});

describe("mock-slow: a slow model", () => {
  check(
    "reference.mock-models",
    "without streaming mock-slow answers 200 after about 2 s, within the budget",
    async ({ api, agents, skip }) => {
      needsReference(skip);
      const agent = await agents.create({ modelSettings: { model: "mock-slow" } });
      const res = await api.sendMessage(agent.id, { text: "take your time" });
      expectOk(res);
      expect(res.exchange.durationMs, "about 2 s: not at once").toBeGreaterThanOrEqual(SLOW_REPLY_MIN_MS);
      expect(res.exchange.durationMs, "within the time budget").toBeLessThanOrEqual(BUDGET_MS + 1000);
    },
  );
});
