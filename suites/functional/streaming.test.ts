import { describe } from "vitest";
import type { StreamResult } from "../../src/client/index.js";
import {
  JSON_CONTENT_TYPE,
  MESSAGE_TIMING,
  type MessageBody,
  type MessageReply,
  SSE_CONTENT_TYPE,
} from "../../src/contract/index.js";
import { type AgentFactory, check, expect, expectError, expectOk, sharedAgent, smoke, target } from "../support/harness.js";

/** PROFILE §5 Send Message with `"stream": true`; §10 `mock-slow`. */

const BUDGET_MS = target.messageTimeoutSeconds * 1000;

/** A stream that never closes would hang the check: give up well past the time budget and say so. */
const closeGuard = () => AbortSignal.timeout(BUDGET_MS * 2 + 15_000);

const mediaTypeOf = (res: { exchange: StreamResult["exchange"] }) =>
  res.exchange.response.headers["content-type"]?.split(";")[0]?.trim().toLowerCase();

/** PROFILE §5: 200 text/event-stream, one or more deltas, exactly one done (the reply, text = joined deltas), then close. */
function expectCompleteStream(res: StreamResult): MessageReply {
  const label = `${res.exchange.request.method} ${res.exchange.request.url}`;
  expect({ status: res.status, contentType: mediaTypeOf(res) }, label).toEqual({ status: 200, contentType: SSE_CONTENT_TYPE });
  expect(res.parseIssues, `${label}: every event parses`).toEqual([]);
  expect({ aborted: res.aborted, transportError: res.transportError }, `${label}: the server closed the stream`).toEqual({
    aborted: false,
    transportError: undefined,
  });
  const names = res.events.map((e) => e.event);
  expect(names.length, `${label}: at least one delta and a done`).toBeGreaterThanOrEqual(2);
  expect(names, `${label}: deltas, then one done, then nothing`).toEqual([...names.slice(0, -1).map(() => "delta"), "done"]);
  expect(res.done, `${label}: done is the reply`).toBeDefined();
  expect(res.done!.text, `${label}: done.text is the joined deltas`).toBe(res.text);
  return res.done!;
}

describe("POST /agents/{agentId}/messages with stream: true", () => {
  smoke("message.stream", "is text/event-stream: deltas, one done carrying the reply, then close", async ({ api, agents }) => {
    const agent = await agents.create();
    const done = expectCompleteStream(
      await api.streamMessage(
        agent.id,
        { text: "hello stream", userId: "u-stream", roomId: "r-stream" },
        { signal: closeGuard() },
      ),
    );
    expect(done).toMatchObject({ agentId: agent.id, userId: "u-stream", roomId: "r-stream", turn: 1 });
  });

  check(
    ["message.stream", "message.conversation", "message.turn"],
    "a stream continues the conversation of non-stream messages with the same userId",
    async ({ api, agents }) => {
      const agent = await agents.create();
      const first = expectOk(await api.sendMessage(agent.id, { text: "one", userId: "u-mixed" }));
      const streamed = expectCompleteStream(
        await api.streamMessage(agent.id, { text: "two", userId: "u-mixed" }, { signal: closeGuard() }),
      );
      const third = expectOk(await api.sendMessage(agent.id, { text: "three", userId: "u-mixed" }));
      expect([first, streamed, third].map((r) => [r.conversationId, r.turn])).toEqual([
        [first.conversationId, 1],
        [first.conversationId, 2],
        [first.conversationId, 3],
      ]);
    },
  );
});

interface PreStreamFault {
  title: string;
  code: "AGENT_NOT_FOUND" | "INVALID_REQUEST" | "AGENT_UNAVAILABLE" | "FORBIDDEN" | "UNAUTHORIZED";
  prepare: (agents: AgentFactory) => Promise<{ agentId: string; body: Omit<MessageBody, "stream">; auth?: "none" }>;
}

/** One agent for the rows refused before the message reaches it (none of them changes it). */
const idleAgent = sharedAgent("prestream");

const PRE_STREAM_FAULTS: PreStreamFault[] = [
  {
    title: "an unknown agent",
    code: "AGENT_NOT_FOUND",
    prepare: async () => ({ agentId: "agt_doesnotexist000", body: { text: "hello" } }),
  },
  {
    title: "an invalid body",
    code: "INVALID_REQUEST",
    prepare: async () => ({ agentId: (await idleAgent()).id, body: { text: "" } }),
  },
  {
    title: "an inactive agent",
    code: "AGENT_UNAVAILABLE",
    prepare: async (agents) => ({
      agentId: (await agents.create({ status: "inactive" })).id,
      body: { text: "hello" },
    }),
  },
  {
    title: "no API key",
    code: "UNAUTHORIZED",
    prepare: async () => ({ agentId: (await idleAgent()).id, body: { text: "hello" }, auth: "none" }),
  },
];

describe("stream: faults found before streaming are JSON errors", () => {
  for (const row of PRE_STREAM_FAULTS) {
    check("message.stream-error", `${row.title} → ${row.code} as JSON`, async ({ api, agents }) => {
      const { agentId, body, auth } = await row.prepare(agents);
      const res = await api.streamMessage(agentId, body, { signal: closeGuard(), ...(auth ? { auth } : {}) });
      expectError(res, row.code);
      expect({ contentType: mediaTypeOf(res), events: res.events.length }).toEqual({ contentType: JSON_CONTENT_TYPE, events: 0 });
    });
  }

  smoke("message.stream-error", "a key without messages:send → 403 FORBIDDEN as JSON", async ({ readOnlyApi }) => {
    const agent = await idleAgent();
    const res = await readOnlyApi.streamMessage(agent.id, { text: "hello" }, { signal: closeGuard() });
    expectError(res, "FORBIDDEN");
    expect({ contentType: mediaTypeOf(res), events: res.events.length }).toEqual({ contentType: JSON_CONTENT_TYPE, events: 0 });
  });
});

describe("stream: the mock-slow model", () => {
  check(
    ["reference.mock-models", "message.stream"],
    "mock-slow streams ≥ 20 deltas spread over time, done within the budget",
    async ({ api, agents, skip }) => {
      const agent = await agents.withMockModel("mock-slow", skip);
      const res = await api.streamMessage(agent.id, { text: "take your time" }, { signal: closeGuard() });
      expectCompleteStream(res);
      const deltas = res.events.filter((e) => e.event === "delta");
      const done = res.events.at(-1)!;
      expect(deltas.length, "deltas").toBeGreaterThanOrEqual(MESSAGE_TIMING.slowModelMinDeltas);
      // PROFILE §10: "spread over about 2 s" — the first chunk comes well before the end, not all at once
      const spreadMs = (MESSAGE_TIMING.slowModelSeconds * 1000) / 4;
      // (a proxy that buffers the response until its end shows it the same way: not progressive)
      expect(
        done.atMs - deltas[0]!.atMs,
        `not progressive: the first delta arrived at ${deltas[0]!.atMs} ms, done at ${done.atMs} ms`,
      ).toBeGreaterThanOrEqual(spreadMs);
      expect(res.exchange.durationMs, "the stream ends within the time budget").toBeLessThanOrEqual(BUDGET_MS + 1000);
    },
  );

  // PROFILE §5: a failed exchange takes no turn, and one whose client went away before done never
  // replied. Mutation testing: a server that let it run on, handing it the turn, survived.
  check(
    ["message.turn", "reference.mock-models"],
    "a client that goes away mid-stream takes no turn: the conversation's next exchange is turn 1",
    async ({ api, agents, skip }) => {
      const agent = await agents.withMockModel("mock-slow", skip);
      const leave = new AbortController();
      const gone = await api.streamMessage(
        agent.id,
        { text: "going away", userId: "u-gone" },
        { signal: AbortSignal.any([leave.signal, closeGuard()]), onEvent: (e) => e.event === "delta" && leave.abort() },
      );
      expect({ aborted: gone.aborted, done: gone.done }, "the client left after the first delta").toEqual({
        aborted: true,
        done: undefined,
      });
      // The service learns of the leave one network delay later, and a message sent now could
      // overtake it (STYLE §12). Its evidence: by then the abandoned exchange has ended one way
      // or the other — mock-slow answers in about 2 s (PROFILE §10), and no exchange outlives the
      // budget (§5); a service that let it run on has handed it turn 1 by the time this one arrives.
      const endedBy = gone.exchange.sentAt + Math.min(BUDGET_MS, 2 * MESSAGE_TIMING.slowModelSeconds * 1000);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, endedBy - Date.now())));
      const next = expectOk(await api.sendMessage(agent.id, { text: "still here", userId: "u-gone" }));
      expect(next.turn, "the turn of the conversation's next exchange").toBe(1);
    },
  );
});
