import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test } from "vitest";
import { RATE_LIMITS } from "../../src/contract/index.js";
import type { ResultsJson } from "../../src/report/index.js";
import { serveProcess } from "./serve-process.js";

/**
 * A finding's replay script reproduces it — exit 1 while the defect is there — and
 * exits 0 once it is gone. The target is a `serve` process with a known key (a replay reads the
 * key from its role's variable), first with an injected fault, then without.
 */
const KEY = "ak_test_replay_0123456789abcdef";
const ALL = ["agents:read", "agents:write", "agents:delete", "messages:send"];

function keysFile(): string {
  const file = join(mkdtempSync(join(tmpdir(), "agent-harness-replay-")), "keys.json");
  const keys = {
    accounts: [{ id: "acct_a", tierLimit: 300, messageQuota: null }],
    keys: [{ key: KEY, account: "acct_a", permissions: ALL }],
  };
  writeFileSync(file, JSON.stringify(keys));
  return file;
}

function serve(keys: string, faults: string[]): ReturnType<typeof serveProcess> {
  return serveProcess([
    "--keys",
    keys,
    "--window-seconds",
    "2",
    "--message-timeout-seconds",
    "3.5",
    ...faults.flatMap((f) => ["--fault", f]),
  ]);
}

function run(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { env: { ...process.env, NO_COLOR: "1", ...env }, timeout: 300_000, maxBuffer: 64 << 20 },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, out: `${stdout}${stderr}` }),
    );
  });
}

test("a replay script exits 1 while the defect is there and 0 once the fault is off", { timeout: 300_000 }, async () => {
  const keys = keysFile();
  const faulty = await serve(keys, ["delete-without-deleted-flag"]);
  const reportDir = mkdtempSync(join(tmpdir(), "agent-harness-replay-report-"));
  let results: ResultsJson;
  try {
    const verify = await run(
      process.execPath,
      ["bin/agent-harness.js", "verify", "--base-url", faulty.baseUrl, "--rate-window", "2", "--message-timeout", "3.5"].concat([
        // the functional checks of the fault's clause only: the property suite on a deployment spends
        // minutes of budget, and the rest of §5 nothing this test reads
        "--suites",
        "functional",
        "--sections",
        "delete.ok",
        "--seed",
        "1",
        "--report-dir",
        reportDir,
      ]),
      { AGENT_API_KEY: KEY },
    );
    expect(verify.code, verify.out.slice(-2000)).toBe(1);
    const runDir = join(reportDir, readdirSync(reportDir)[0]!);
    results = JSON.parse(readFileSync(join(runDir, "results.json"), "utf8")) as ResultsJson;
    const finding = results.findings?.find((f) => f.clauseIds.includes("delete.ok"));
    expect(finding?.replay, JSON.stringify(results.findings, null, 1)).toMatch(/^replay-F\d+\.sh$/);
    const script = join(runDir, finding!.replay!);
    // the minimal sequence: the create, then the failing call, each reading the key's variable
    const text = readFileSync(script, "utf8");
    expect(text.match(/curl -sS -i /g)?.length).toBe(2);
    expect(text).toContain('"$AGENT_API_KEY"');
    expect(text).not.toContain(KEY);

    // the key's Delete bucket spent first (a 404 is counted too, PROFILE §7), as right after the run
    // that found the defect: the script's DELETE meets a 429, waits its Retry-After and sends it again
    for (let i = 0; i < RATE_LIMITS.perKeyEndpoint.deleteAgent + 1; i++)
      await fetch(`${faulty.baseUrl}/agents/agt_none${i}`, { method: "DELETE", headers: { authorization: `Bearer ${KEY}` } });
    const still = await run(script, [], { AGENT_API_KEY: KEY, AGENT_API_BASE_URL: faulty.baseUrl });
    expect(still.code, still.out).toBe(1);
    expect(still.out).toMatch(/still there: delete\.ok/);
    await faulty.stop();

    const fixed = await serve(keys, []);
    try {
      const gone = await run(script, [], { AGENT_API_KEY: KEY, AGENT_API_BASE_URL: fixed.baseUrl });
      expect(gone.code, gone.out).toBe(0);
      expect(gone.out).toMatch(/^gone: /m);
    } finally {
      await fixed.stop();
    }
  } finally {
    await faulty.stop().catch(() => {});
  }
});
