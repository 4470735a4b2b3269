import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { ServiceClient } from "../client/index.js";
import { newRunId } from "../report/write.js";
import { startReferenceServer } from "../target/embedded.js";
import { EMBEDDED_DEFAULTS, type HarnessTarget, referenceKeys, runPrefixFor } from "../target/harness-target.js";
import type { StartedReference } from "../target/types.js";
import { deleteByPrefix, sweepLedger } from "./cleanup.js";

/**
 * The end-of-run sweep against a reference server with two key sets (two parallel workers, each its
 * own accounts): every leftover is deleted in the account that holds it, the property suites' account
 * included, by that account's key alone.
 */
describe("the end-of-run sweep", () => {
  const { file, keys } = referenceKeys({ ...EMBEDDED_DEFAULTS, workers: 2, mainKeys: 1 });
  const [first, second] = [keys[0]!, keys[1]!];
  let server: StartedReference;
  let target: HarnessTarget;
  const clients: ServiceClient[] = [];
  const clientOf = (apiKey: string) => {
    const client = new ServiceClient({ baseUrl: server.baseUrl, apiKey, idField: "id" });
    clients.push(client);
    return client;
  };
  const create = async (apiKey: string, name: string) => {
    const res = await clientOf(apiKey).createAgent({ name });
    expect(res.status).toBe(201);
    return res.data!.id;
  };

  beforeAll(async () => {
    // a window no test outlives: the Delete buckets show exactly the deletes the sweep sent
    server = await startReferenceServer({ keys: file, windowSeconds: 600 });
    target = {
      kind: "embedded",
      baseUrl: server.baseUrl,
      keys: first,
      keyPool: keys,
      windowSeconds: 600,
      messageTimeoutSeconds: 5,
      referenceFaults: true,
      idField: "id",
      runPrefix: "ah-sweep-",
      ledgerFile: join(mkdtempSync(join(tmpdir(), "agent-harness-sweep-")), "ledger.jsonl"),
      seed: 1,
    };
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await server.close();
  });

  test("deletes leftovers of every account and strays with the run's prefix, keeps the rest, sends no DELETE elsewhere", async () => {
    const deletedByTheRun = await create(first.main, "ah-sweep-a");
    const mainLeftover = await create(first.main, "ah-sweep-b");
    const propertyLeftover = await create(second.propertyKeys![0]!, "ah-sweep-c");
    const stray = await create(first.otherAccount!, "ah-sweep-stray");
    const notOurs = await create(first.main, "someone else's");
    writeFileSync(
      target.ledgerFile,
      [{ created: deletedByTheRun }, { created: mainLeftover }, { created: propertyLeftover }, { deleted: deletedByTheRun }]
        .map((e) => JSON.stringify(e))
        .join("\n"),
    );
    expect((await clientOf(first.main).deleteAgent(deletedByTheRun)).status).toBe(200);

    const result = await sweepLedger(target, target.ledgerFile);
    expect(result).toMatchObject({ id: "run.cleanup", status: "passed" });
    expect(result.message).toBe("deleted 2 leftover agent(s) and 1 the ledger did not know");
    for (const [key, id] of [
      [first.main, mainLeftover],
      [second.propertyKeys![0]!, propertyLeftover],
      [first.otherAccount!, stray],
    ] as const)
      expect((await clientOf(key).getAgent(id)).status, id).toBe(404);
    expect((await clientOf(first.main).getAgent(notOurs)).status).toBe(200);

    // the second worker's main account held no leftover: its key sent no DELETE (its bucket is full)
    const probe = await clientOf(second.main).deleteAgent("agt_none");
    expect(probe.status).toBe(404);
    const { headers } = probe.exchange.response;
    expect(headers["x-ratelimit-remaining"]).toBe(String(Number(headers["x-ratelimit-limit"]) - 1));
  });

  test("an empty ledger and a clean account: passed, nothing to say", async () => {
    writeFileSync(target.ledgerFile, "");
    const result = await sweepLedger(target, target.ledgerFile);
    expect(result.status).toBe("passed");
    expect(result.message).toBeUndefined();
  });
});

/**
 * `agent-harness cleanup` against a stand-in deployment whose records name their identifier
 * `agentId` (PROFILE §11 lets a deployment choose it) and whose DELETE answers as it is told.
 */
describe("cleanup by prefix", () => {
  const NAME = "ah-2026-12-01T00-00-00-000Z-abcdef-left";
  let listed: { agentId: string; name: string }[] = [{ agentId: "a1", name: NAME }];
  let deleteStatus = 200;
  const deletes: string[] = [];
  const server = createServer((req, res) => {
    res.setHeader("content-type", "application/json");
    if (req.method === "DELETE") {
      deletes.push(req.url ?? "");
      const refused = deleteStatus !== 200;
      res.statusCode = deleteStatus;
      res.end(
        JSON.stringify(
          refused
            ? { success: false, error: { code: deleteStatus === 403 ? "FORBIDDEN" : "UNAUTHORIZED", message: "no" } }
            : { success: true, data: { agentId: "a1", deleted: true } },
        ),
      );
      return;
    }
    res.end(
      JSON.stringify({
        success: true,
        data: listed,
        pagination: { page: 1, limit: 100, total: listed.length, totalPages: 1, hasMore: false },
      }),
    );
  });
  const run = async (more: { idField?: string; olderThanSeconds?: number }) => {
    const chunks = { out: "", err: "" };
    const sink = (k: keyof typeof chunks) =>
      new Writable({
        write: (c, _e, done) => {
          chunks[k] += String(c);
          done();
        },
      });
    const { port } = server.address() as AddressInfo;
    const code = await deleteByPrefix(
      { baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: "k", prefix: "ah-", windowSeconds: 1, dryRun: false, ...more },
      sink("out"),
      sink("err"),
    );
    return { code, ...chunks };
  };
  beforeAll(() => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve)));
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test("records of another identifier field: without --id-field exit 2 naming it (never '0 agents', exit 0); with it, the agent is deleted", async () => {
    deleteStatus = 200;
    deletes.length = 0;
    const blind = await run({});
    expect(blind.code).toBe(2);
    expect(blind.err).toMatch(/page 1 holds 1 agent\(s\), none with a string id and name: .*--id-field/);
    expect(deletes).toEqual([]);
    const seen = await run({ idField: "agentId" });
    expect(seen).toMatchObject({ code: 0, out: `1 agent(s) named ah-…\ndeleted a1 ${NAME}\n` });
    expect(deletes).toEqual(["/v1/agents/a1"]);
  });

  test("a run that started within --older-than keeps its agents (it may still be going); older runs' are deleted", async () => {
    deleteStatus = 200;
    deletes.length = 0;
    const recent = `${runPrefixFor(newRunId(new Date(Date.now() - 60_000)))}going`;
    listed = [
      { agentId: "a1", name: NAME },
      { agentId: "a2", name: recent },
    ];
    try {
      const swept = await run({ idField: "agentId", olderThanSeconds: 3600 });
      expect(swept.code).toBe(0);
      expect(swept.out).toMatch(/^1 agent\(s\) named ah-…; 1 more of runs started in the last 1h kept .*--older-than 0/);
      expect(deletes).toEqual(["/v1/agents/a1"]);
      deletes.length = 0;
      expect((await run({ idField: "agentId", olderThanSeconds: 0 })).code).toBe(0);
      expect(deletes).toEqual(["/v1/agents/a1", "/v1/agents/a2"]);
    } finally {
      listed = [{ agentId: "a1", name: NAME }];
    }
  });

  test.for([401, 403])("a key the service refuses to delete with (%i) is exit 2, no verdict on the service", async (status) => {
    deleteStatus = status;
    const refused = await run({ idField: "agentId" });
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(new RegExp(`DELETE a1 answered ${status} .*this key may not delete here`));
  });
});
