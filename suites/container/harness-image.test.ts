import { execFile } from "node:child_process";
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { ensureHarnessImage, type HarnessImage } from "../../src/package/harness-image.js";
import type { ResultsJson } from "../../src/report/index.js";
import { startReferenceServer } from "../../src/target/embedded.js";
import { EMBEDDED_DEFAULTS } from "../../src/target/harness-target.js";
import { dockerCliUnavailableReason } from "../../src/target/image.js";
import type { StartedReference } from "../../src/target/types.js";

/**
 * The harness as an image, for CI systems without Node: `docker run --network host IMAGE verify
 * --base-url …` with the key from the environment, against a reference server on this machine.
 * A clean server passes; one with an injected defect the smoke checks catch exits 1. Needs a
 * reachable Docker daemon and npm (the image installs the packed tarball); under CI=true a missing
 * daemon fails instead of skipping.
 */

const dockerMissing = await dockerCliUnavailableReason();
const mustRun = process.env.CI === "true";
const skipNote = `Docker is not reachable (${dockerMissing}); start a daemon (\`dockerd --bridge=none --iptables=false &\`) and run \`npx vitest run --project container\``;
if (dockerMissing !== undefined && !mustRun) console.warn(`SKIPPED: ${skipNote}`);

/** a defect the smoke profile catches: DELETE answers without `deleted: true` (PROFILE §5 Delete) */
const FAULT = "delete-without-deleted-flag";

test("Docker is reachable for the harness image", (context) => {
  if (dockerMissing !== undefined && !mustRun) context.skip(skipNote);
  expect(dockerMissing, `Docker is required when CI=true: ${dockerMissing}`).toBeUndefined();
});

describe.skipIf(dockerMissing !== undefined)("the harness image", () => {
  let image: HarnessImage;
  const servers: StartedReference[] = [];
  const containers: string[] = [];
  const reportRoot = mkdtempSync(join(tmpdir(), "agent-harness-image-reports-"));
  // the image runs as nobody: the mounted report folder must be writable by it
  chmodSync(reportRoot, 0o777);

  beforeAll(async () => {
    image = await ensureHarnessImage();
    const plan = {
      windowSeconds: EMBEDDED_DEFAULTS.windowSeconds,
      messageTimeoutSeconds: EMBEDDED_DEFAULTS.messageTimeoutSeconds,
    };
    servers.push(await startReferenceServer(plan), await startReferenceServer({ ...plan, faults: [FAULT] }));
  }, 300_000);

  afterAll(async () => {
    // a run cut short by its timeout leaves its container behind: remove it by name
    await Promise.all(containers.map((name) => docker(["rm", "--force", name], 30_000)));
    await Promise.all(servers.map((server) => server.close()));
    rmSync(reportRoot, { recursive: true, force: true });
  });

  /** `docker run --network host IMAGE verify …` against `server`, the key passed by name from this process's environment. */
  async function verifyInContainer(
    server: StartedReference,
    label: string,
  ): Promise<{ code: number | null; output: string; results: ResultsJson }> {
    const name = `agent-harness-image-test-${process.pid}-${label}`;
    containers.push(name);
    const reportDir = mkdtempSync(join(reportRoot, `${label}-`));
    chmodSync(reportDir, 0o777);
    const args = [
      "run",
      "--rm",
      "--name",
      name,
      "--network",
      "host",
      "--env",
      "AGENT_API_KEY",
      "--volume",
      `${reportDir}:/reports`,
    ];
    args.push(image.name, "verify", "--base-url", server.baseUrl, "--profile", "smoke", "--report-dir", "/reports");
    args.push(
      "--rate-window",
      String(EMBEDDED_DEFAULTS.windowSeconds),
      "--message-timeout",
      String(EMBEDDED_DEFAULTS.messageTimeoutSeconds),
    );
    // PROFILE §10: the reference server answers the mock models, so their checks run too
    args.push("--reference-faults");
    const run = await docker(args, 150_000, { AGENT_API_KEY: server.keys.keys[0]?.key ?? "" });
    const [runDir] = readdirSync(reportDir);
    if (runDir === undefined) throw new Error(`no report written (exit ${run.code}):\n${run.output}`);
    return { ...run, results: JSON.parse(readFileSync(join(reportDir, runDir, "results.json"), "utf8")) };
  }

  // the two runs wait on windows and budgets more than they compute: side by side
  test.concurrent("verify --base-url against a conformant server passes, the key read from the environment", async ({
    expect,
  }) => {
    const run = await verifyInContainer(servers[0]!, "clean");
    expect(run.code, run.output).toBe(0);
    expect(run.results.checks.filter((check) => check.status === "passed").length).toBeGreaterThan(0);
    expect(run.results.checks.filter((check) => check.status === "failed" || check.status === "error")).toEqual([]);
    expect(run.output).not.toContain(servers[0]!.keys.keys[0]!.key);
  }, 180_000);

  test.concurrent(`verify --base-url against a server with ${FAULT} exits 1 with the finding`, async ({ expect }) => {
    const run = await verifyInContainer(servers[1]!, "fault");
    expect(run.code, run.output).toBe(1);
    expect(
      run.results.findings?.flatMap((finding) => finding.clauseIds),
      run.output,
    ).toContain("delete.ok");
  }, 180_000);
});

function docker(
  args: string[],
  timeout: number,
  env: Record<string, string> = {},
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    execFile(
      "docker",
      args,
      { timeout, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, ...env } },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : null;
        resolve({ code, output: `${stdout}\n${stderr}` });
      },
    );
  });
}
