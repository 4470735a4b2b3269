import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { ServiceClient } from "../client/index.js";
import { startReferenceServer } from "../target/embedded.js";
import { EMBEDDED_DEFAULTS, type HarnessTarget, referenceKeys } from "../target/harness-target.js";
import type { StartedReference } from "../target/types.js";
import { sweepLedger } from "./cleanup.js";

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
