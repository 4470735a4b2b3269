import { describe } from "vitest";
import type { ApiResult, ServiceClient, StreamResult } from "../../src/client/index.js";
import {
  JSON_CONTENT_TYPE,
  MESSAGE_LIMITS,
  MESSAGE_TIMING,
  type MessageBody,
  type MessageReply,
  RATE_LIMITS,
  SSE_CONTENT_TYPE,
} from "../../src/contract/index.js";
import { declareFile } from "../support/declare-file.js";
import {
  type AgentFactory,
  check,
  expect,
  expectError,
  expectOk,
  HarnessError,
  sharedAgent,
  smoke,
  target,
  unlessEndedByTheBudget,
  unlessTheModelFailed,
} from "../support/harness.js";

declareFile({ keys: ["readOnly"], sendsMessages: true });

/** PROFILE §5 Send Message with `"stream": true`; §10 `mock-slow`. */

const BUDGET_MS = target.messageTimeoutSeconds * 1000;

/** A stream that never closes would hang the check: give up well past the time budget and say so. */
const closeGuard = () => AbortSignal.timeout(BUDGET_MS * 2 + 15_000);

const mediaTypeOf = (res: { exchange: StreamResult["exchange"] }) =>
  res.exchange.response.headers["content-type"]?.split(";")[0]?.trim().toLowerCase();

/** PROFILE §5: 200 text/event-stream, one or more deltas, exactly one done (the reply, text = joined deltas), then close. */
function expectCompleteStream(res: StreamResult): MessageReply {
  const label = `${res.exchange.request.method} ${res.exchange.request.url}`;
  // (the agent in error after its model failed an earlier message answers 503 before streaming)
  if (res.status !== 200) unlessTheModelFailed(res.error?.code, res.exchange, `${label}: expected 200; received ${res.status}`);
  expect({ status: res.status, contentType: mediaTypeOf(res) }, label).toEqual({ status: 200, contentType: SSE_CONTENT_TYPE });
  expect(res.parseIssues, `${label}: every event parses`).toEqual([]);
  expect({ aborted: res.aborted, transportError: res.transportError }, `${label}: the server closed the stream`).toEqual({
    aborted: false,
    transportError: undefined,
  });
  const names = res.events.map((e) => e.event);
  // a stream the budget ended (a starved runner, a short --message-timeout) cannot show its done
  // a deployment's own model may fail it (PROFILE §5): an error event then, which no check can judge
  if (names.at(-1) === "error") {
    const expected = `${label}: expected deltas, then one done; received an error event`;
    unlessEndedByTheBudget(res.error?.code, res.exchange, expected);
    unlessTheModelFailed(res.error?.code, res.exchange, expected);
  }
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
      // the longest text PROFILE §5 takes: its reply is spread over about 2 s too, however long
      // (a service that paced per character would outlast the budget with it)
      const text = "take your time ".repeat(MESSAGE_LIMITS.text.max).slice(0, MESSAGE_LIMITS.text.max).trimEnd();
      const res = await api.streamMessage(agent.id, { text }, { signal: closeGuard() });
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

  /**
   * The service learns of a leave one network delay later, and a message sent at once could
   * overtake it (STYLE §12): `send` is sent once there is evidence that the service saw the client
   * leave. Nine mock-slow streams opened after the abandoned one fill the agent's other slots
   * (PROFILE §7: 10 in flight), so `send` is admitted only once the abandoned exchange's slot is
   * free ("a slot frees when … client gone"); until then it is refused 429 with Retry-After: 1,
   * counted in no bucket and with no effect, and sent again. A filler that has ended is evidence
   * too: it started after the abandoned exchange and runs as long (PROFILE §10), so a service that
   * let that one run on has finished it by then. Returns the answer to `send` and the wait for
   * every filler to end: after that, any exchange the service let run on has ended as well.
   */
  async function onceSlotOfAbandonedFreed(
    api: ServiceClient,
    agentId: string,
    abandonedAt: number,
    send: () => Promise<ApiResult<MessageReply>>,
  ): Promise<{ answer: ApiResult<MessageReply>; allEnded: () => Promise<unknown> }> {
    const held: Promise<unknown>[] = [];
    const allEnded = () => Promise.allSettled(held);
    let fillersEnded = 0;
    try {
      const admitted = await Promise.all(
        Array.from(
          { length: RATE_LIMITS.messageConcurrency - 1 },
          (_, i) =>
            new Promise<boolean>((resolve) => {
              const stream = api.streamMessage(
                agentId,
                { text: `filler ${i}` },
                { signal: closeGuard(), onEvent: () => resolve(true) },
              );
              held.push(stream);
              void stream.then(
                (res) => resolve(res.status === 200),
                () => resolve(false),
              );
            }),
        ),
      );
      for (const stream of held) void stream.finally(() => fillersEnded++);
      const refused = admitted.filter((a) => !a).length;
      if (refused)
        throw new HarnessError(`${refused} of the 9 streams that fill the agent's other slots were refused: inconclusive`);
      // bounded in count and in time: the abandoned exchange ends within the budget in any case (PROFILE §5)
      const until = abandonedAt + BUDGET_MS + 1000;
      for (let attempt = 0; attempt < 50 && Date.now() < until; attempt++) {
        const answer = await send();
        const slotsFull =
          answer.status === 429 &&
          answer.error?.code === "RATE_LIMIT_EXCEEDED" &&
          answer.exchange.retryAfterSeconds === RATE_LIMITS.concurrencyRetryAfterSeconds;
        if (!slotsFull || fillersEnded > 0) return { answer, allEnded };
      }
      throw new HarnessError("no slot of the agent was freed within the time budget after the client left: inconclusive");
    } catch (err) {
      await allEnded();
      throw err;
    }
  }

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
      const { answer, allEnded } = await onceSlotOfAbandonedFreed(api, agent.id, gone.exchange.sentAt, () =>
        api.sendMessage(agent.id, { text: "still here", userId: "u-gone" }),
      );
      const next = expectOk(answer);
      expect(next.turn, "the turn of the conversation's next exchange, once the service freed the leaver's slot").toBe(1);
      // a service that freed the slot yet let the exchange run on hands it a turn when it ends
      await allEnded();
      const after = expectOk(await api.sendMessage(agent.id, { text: "and still", userId: "u-gone" }));
      expect(after.turn, "the turn after, once any exchange let run on would have ended").toBe(2);
    },
  );
});
