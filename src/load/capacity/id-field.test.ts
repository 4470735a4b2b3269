import { describe, expect, test } from "vitest";
import { JSON_CONTENT_TYPE } from "../../contract/index.js";
import { ScenarioContext } from "../context.js";
import { LoadRecorder } from "../recorder.js";
import { deploymentAt, serveDuringTests } from "../test-support.js";
import { CapacityDrive } from "./drive.js";
import { exampleTenants } from "./plan.js";

/** PROFILE §11: a deployment names its identifier field; capacity reads a created agent's id under that name. */
const paths: string[] = [];
const agentIdService = serveDuringTests((req, res) => {
  paths.push(`${req.method} ${req.url}`);
  const created = req.method === "POST" && req.url === "/v1/agents";
  res.writeHead(created ? 201 : 200, { "content-type": JSON_CONTENT_TYPE });
  res.end(JSON.stringify({ success: true, data: created ? { agentId: "agt_named" } : {} }));
});

describe("the run's own keys among the tenants", () => {
  test("the accounts holding one are named: their earlier requests are in windows the drive's ledger never saw", () => {
    const tenants = exampleTenants(3, 2, 300);
    const inFile = deploymentAt(agentIdService.baseUrl, { keys: { main: tenants.keys[2]!.key } });
    const apart = deploymentAt(agentIdService.baseUrl, { keys: { main: "ak_test_not_a_tenant_000001" } });
    const driveOf = (target: typeof inFile) =>
      new CapacityDrive(new ScenarioContext(target, new LoadRecorder(target, "capacity"), new AbortController().signal), {
        tenants,
        share: 0.8,
        durationSeconds: 1,
        rampSeconds: 0,
        profile: "steady",
      });
    expect(driveOf(inFile).accountsSharedWithTheRun()).toEqual([tenants.keys[2]!.account]);
    expect(driveOf(apart).accountsSharedWithTheRun()).toEqual([]);
  });
});

describe("capacity on a deployment whose identifier field is not `id`", () => {
  test("each writer's agent is found under --id-field and its requests go to that agent", async () => {
    const tenants = exampleTenants(1, 1, 300);
    const target = deploymentAt(agentIdService.baseUrl, { keys: { main: tenants.keys[0]!.key }, idField: "agentId" });
    const ctx = new ScenarioContext(target, new LoadRecorder(target, "capacity"), new AbortController().signal);
    const drive = new CapacityDrive(ctx, { tenants, share: 0.8, durationSeconds: 1, rampSeconds: 0, profile: "steady" });
    await drive.setUp();
    expect(paths).toContain("POST /v1/agents");
    expect(paths.filter((p) => p.includes("/agents/")).length).toBe(0);
    await ctx.cleanup();
    expect(paths).toContain("DELETE /v1/agents/agt_named");
  });
});
