import { createServer, type RequestListener } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll } from "vitest";
import type { HarnessTarget } from "../target/harness-target.js";
import type { Scenario } from "./define.js";
import type { LoadRecorder, LoadResponse } from "./recorder.js";

/** A deployment as the load scenarios see it, for unit tests: nothing is sent unless a test serves `baseUrl`. */
export function deploymentAt(baseUrl: string, overrides: Partial<HarnessTarget> = {}): HarnessTarget {
  return {
    kind: "external",
    baseUrl,
    keys: { main: "ak_test_load_main_000001" },
    windowSeconds: 60,
    messageTimeoutSeconds: 30,
    referenceFaults: false,
    idField: "id",
    runPrefix: "ah-test-",
    ledgerFile: "/dev/null",
    seed: 1,
    ...overrides,
  };
}

/** An answer as the generator hands it to the recorder, for unit tests: `GET /agents` unless told. */
export function answer(status: number, latencyMs: number, receivedAt: number, endpoint = "GET /agents"): LoadResponse {
  return {
    method: endpoint.split(" ")[0]!,
    url: `http://127.0.0.1:9/v1${endpoint.split(" ")[1]}`,
    endpoint,
    status,
    headers: {},
    bodyText: "",
    json: undefined,
    code: undefined,
    rate: undefined,
    requestId: undefined,
    receivedAt,
    latencyMs,
  };
}

/** A scenario that sends nothing: `record` hands the recorder what it would have seen. */
export function recordingScenario(
  record: (recorder: LoadRecorder) => void,
  latency: Scenario["latency"] = { note: "answers recorded by the test", judged: true },
  id = "recorded",
): Scenario {
  return {
    id,
    title: "answers recorded by a unit test",
    clauses: ["limits.429"],
    latency,
    estimateSeconds: () => 1,
    run: async (ctx) => record(ctx.recorder),
  };
}

/** Record each answer `answers` makes from the scenario's start time. */
export const observing = (answers: (startedAt: number) => LoadResponse[]) => (recorder: LoadRecorder) => {
  for (const a of answers(recorder.startedAt)) recorder.observe(a);
};

/**
 * A stand-in target on loopback for the tests of one file: listening before them, closed (every
 * connection ended) after them; request bodies are read and dropped. `baseUrl` is its `/v1`.
 */
export function serveDuringTests(handler: RequestListener): { readonly baseUrl: string } {
  const server = createServer((req, res) => {
    req.resume();
    handler(req, res);
  });
  const served = { baseUrl: "" };
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    served.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return served;
}
