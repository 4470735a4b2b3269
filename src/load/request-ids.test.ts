import type { ServerResponse } from "node:http";
import { describe, expect, test } from "vitest";
import { HEADERS, paginationFor } from "../contract/index.js";
import { shoot } from "./burst.js";
import { ScenarioContext } from "./context.js";
import { LoadRecorder } from "./recorder.js";
import { requestTo } from "./requests.js";
import { deploymentAt, serveDuringTests } from "./test-support.js";

const KEY = "ak_test_loadids_000000001";

/** A conformant list answer carrying `requestId` (PROFILE §1, §2, §7). */
function list(res: ServerResponse, requestId: string, close = false) {
  res.writeHead(200, {
    "content-type": "application/json",
    [HEADERS.requestId]: requestId,
    [HEADERS.limit]: "1000",
    [HEADERS.remaining]: "999",
    [HEADERS.reset]: String(Math.ceil(Date.now() / 1000) + 60),
    ...(close ? { connection: "close" } : {}),
  });
  res.end(JSON.stringify({ success: true, data: [], pagination: paginationFor(1, 1, 0) }));
}

/** Echoes each id, and closes every connection after its second answer (a proxy's request cap): pipelined requests behind it are lost. */
const capped = serveDuringTests((req, res) => {
  const served = ((req.socket as { served?: number }).served ?? 0) + 1;
  Object.assign(req.socket, { served });
  list(res, String(req.headers[HEADERS.requestId]), served >= 2);
});

/** Answers each request with the id of the last one read on its connection. */
const lastRead = new WeakMap<object, string>();
const mixedUp = serveDuringTests((req, res) => {
  lastRead.set(req.socket, String(req.headers[HEADERS.requestId]));
  setImmediate(() => list(res, lastRead.get(req.socket) ?? ""));
});

async function pipelined(baseUrl: string, bound: { amount: number } | { durationSeconds: number }) {
  const target = deploymentAt(baseUrl, { keys: { main: KEY } });
  const recorder = new LoadRecorder(target, "ids");
  const ctx = new ScenarioContext(target, recorder, new AbortController().signal);
  const { answers } = await shoot({
    ...ctx.generator(KEY),
    request: requestTo("listAgents", { query: { limit: "1" } }),
    connections: 1,
    pipelining: 4,
    ...bound,
    keep: true,
  });
  await ctx.cleanup();
  recorder.generatorHealth();
  return { answers, checks: recorder.observations.map((o) => o.check) };
}

describe("every answer autocannon receives is paired with the X-Request-Id its request was sent with (PROFILE §1)", () => {
  test("each request has an id of its own, echoed; a connection the target closed does not shift the pairing", async () => {
    // for a time: a bounded amount would wait for the answers the closed connection lost
    const { answers, checks } = await pipelined(capped.baseUrl, { durationSeconds: 0.5 });
    expect(answers.length).toBeGreaterThan(0);
    expect(new Set(answers.map((a) => a.sentRequestId)).size).toBe(answers.length);
    expect(answers.filter((a) => a.requestId !== a.sentRequestId)).toEqual([]);
    expect(checks).toEqual([]);
  });

  test("an answer carrying a pipelined neighbour's id is a request-id-echo finding", async () => {
    const { answers, checks } = await pipelined(mixedUp.baseUrl, { amount: 12 });
    expect(answers.length).toBe(12);
    expect(checks).toEqual(["request-id-echo"]);
  });
});
