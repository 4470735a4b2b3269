/**
 * The concurrency faults are real: each probe sends requests at once through the public API; the
 * clean server answers as PROFILE asks, the faulty one does not. One at a time, the faulty server
 * answers like the clean one: the functional suite's view (the last test).
 */
import { connect } from "node:net";
import { describe, expect, test } from "vitest";
import { HEADERS } from "../../contract/index.js";
import { KEYS, makeServer, type TestServer } from "../test-support.js";
import { agentOf, num } from "../test-support-answers.js";
import { listen } from "../test-support-http.js";
import { CONCURRENCY_FAULTS } from "./concurrency.js";
import { type FaultProbe, probesOfFaults } from "./test-probes.js";

/** `ids.length` GETs written at once on one connection (HTTP/1.1 pipelining); the X-Request-Id of each answer, in order. */
async function pipelinedIds(s: TestServer, path: string, ids: readonly string[]): Promise<string[]> {
  const { origin, close } = await listen(s);
  const { port } = new URL(origin);
  const socket = connect(Number(port), "127.0.0.1");
  const request = (id: string) =>
    `GET ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${KEYS.main}\r\n${HEADERS.requestId}: ${id}\r\n\r\n`;
  socket.write(ids.map(request).join(""));
  let text = "";
  const pattern = new RegExp(`^${HEADERS.requestId}: (\\S+)\\r$`, "gim");
  await new Promise<void>((resolve, reject) => {
    socket.on("data", (chunk) => {
      text += chunk.toString("latin1");
      if ([...text.matchAll(pattern)].length >= ids.length) resolve();
    });
    socket.on("error", reject);
  });
  socket.destroy();
  await close();
  return [...text.matchAll(pattern)].map((m) => m[1]!);
}

const PROBES: Record<string, FaultProbe> = {
  "request-id-of-pipelined-neighbour": {
    expected: ["r-1", "r-2", "r-3", "r-4"],
    probe: async (s) => pipelinedIds(s, `/v1/agents/${(await s.createAgent()).id}`, ["r-1", "r-2", "r-3", "r-4"]),
  },
  "update-read-modify-write": {
    expected: { traits: ["calm"], plugins: ["images"] },
    probe: async (s) => {
      const { id } = await s.createAgent();
      await Promise.all([
        s.call("PATCH", `/v1/agents/${id}`, { body: { personality: { traits: ["calm"] } } }),
        s.call("PATCH", `/v1/agents/${id}`, { body: { plugins: ["images"] } }),
      ]);
      const read = agentOf(await s.call("GET", `/v1/agents/${id}`));
      return { traits: read.personality.traits, plugins: read.plugins };
    },
  },
  "update-applied-in-parts": {
    // reads while a two-field PATCH is in flight show both fields old or both new, never one of each
    expected: true,
    probe: async (s) => {
      const { id } = await s.createAgent();
      let done = false;
      const patch = s.call("PATCH", `/v1/agents/${id}`, { body: { name: "both-new", bio: "both-new" } }).then(() => {
        done = true;
      });
      const reads = [];
      // a read each turn of the event loop (the PATCH's body arrives on one of them) until the PATCH answers
      for (let i = 0; i < 50 && !done; i++) {
        reads.push(agentOf(await s.call("GET", `/v1/agents/${id}`)));
        await new Promise((resolve) => setImmediate(resolve));
      }
      await patch;
      reads.push(agentOf(await s.call("GET", `/v1/agents/${id}`)));
      return reads.every((a) => (a.name === "both-new") === (a.bio === "both-new"));
    },
  },
  "remaining-ignores-in-flight": {
    // PROFILE §7: the k-th counted leaves at most 60 − k, whenever its answer is written
    expected: true,
    probe: async (s) => {
      const { id } = await s.createAgent();
      const answers = await Promise.all(Array.from({ length: 5 }, () => s.call("GET", `/v1/agents/${id}`)));
      const remaining = answers.map((r) => num(r, HEADERS.remaining)).sort((a, b) => b - a);
      return remaining.every((r, i) => r <= 60 - (i + 1));
    },
  },
};

describe("faults only concurrency reveals", () => {
  probesOfFaults({ name: "concurrency", faults: CONCURRENCY_FAULTS }, PROBES);

  test.for(Object.keys(CONCURRENCY_FAULTS))("%s answers one request at a time like the clean server", async (name) => {
    const s = makeServer({ faults: [name] });
    const { id } = await s.createAgent();
    const patched = await s.call("PATCH", `/v1/agents/${id}`, {
      body: { plugins: ["images"] },
      headers: { [HEADERS.requestId]: "one-1" },
    });
    const read = await s.call("GET", `/v1/agents/${id}`, { headers: { [HEADERS.requestId]: "one-2" } });
    expect([patched.headers[HEADERS.requestId], read.headers[HEADERS.requestId]]).toEqual(["one-1", "one-2"]);
    expect(agentOf(read).plugins).toEqual(["images"]);
    expect([num(patched, HEADERS.remaining), num(read, HEADERS.remaining)]).toEqual([29, 59]);
  });
});
