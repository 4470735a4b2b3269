import { execFile, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { untilReady } from "../../src/cli/ready-line.js";
import { budgetEndedWords } from "../../src/contract/index.js";

/** The CLI's contract with CI: exit 0 pass, 1 a check failed, 2 bad usage or unreachable target. */
function run(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  timeoutMs = 120_000,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["bin/agent-harness.js", ...args],
      { env: { ...process.env, NO_COLOR: "1", ...env }, timeout: timeoutMs },
      (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe("meta: the agent-harness CLI", { concurrent: true }, () => {
  test.for([
    [["verify", "--bogus"], /Unknown option '--bogus'/],
    [["verify", "--tier", "x"], /--tier must be/],
    [["verify", "--base-url", "http://127.0.0.1:9/v1"], /needs --api-key/],
    [["nonsense"], /unknown command/],
    [["serve", "--port", "70000"], /--port must be at most 65535/],
    [["serve", "--keys", "/nonexistent/keys.json"], /cannot read --keys/],
    [["cleanup"], /needs --base-url/],
    [["cleanup", "--base-url", "http://a b/v1", "--api-key", "k"], /needs --base-url: an http\(s\) URL ending with \/v1/],
    [["cleanup", "--base-url", "http://h.example/v1", "--api-key", "k", "--id-field", "a-b"], /--id-field must be a field name/],
    [
      ["cleanup", "--base-url", "http://h.example/v1", "--api-key", "k", "--older-than", "5x"],
      /--older-than "5x": expected a duration/,
    ],
    [["openapi", "extra"], /takes no arguments/],
    [["serve", "--fault", "nope"], /unknown --fault "nope"/],
  ] as const)("%j exits 2 with a readable message", async ([args, message]) => {
    const { code, stderr } = await run([...args]);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
    expect(stderr).not.toMatch(/\n\s+at /); // a message, not a stack trace
    expect(stderr.trim().split("\n")).toHaveLength(1); // one line, no fault list
  });

  test.for([
    [
      "AGENT_API_KEY",
      /--api-key \(or \$AGENT_API_KEY\) is set but the base URL is missing: set --base-url or \$AGENT_API_BASE_URL/,
    ],
    ["AGENT_API_READ_ONLY_KEY", /--read-only-key .* base URL is missing/],
  ] as const)("%s without a base URL is a usage error, not a green run of the embedded server", async ([variable, message]) => {
    const { code, stderr } = await run(["verify"], { [variable]: "ak_test_some_key_123456", AGENT_API_BASE_URL: "" });
    expect(code).toBe(2);
    expect(stderr.trim().split("\n")).toHaveLength(1);
    expect(stderr).toMatch(message);
  });

  test("a keys file of the wrong shape names each issue at its path, in one line", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "ah-keys-")), "keys.json");
    writeFileSync(file, JSON.stringify({ accounts: [{ id: 5 }], keys: "none" }));
    const { code, stderr } = await run(["serve", "--keys", file]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/is not a keys file: accounts\.0\.id: .*; .*keys: /);
    expect(stderr.trim().split("\n")).toHaveLength(1);
  });

  test("a malformed keys file names the line and column, in one line", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "ah-keys-")), "keys.json");
    writeFileSync(file, '{\n  "accounts": [],\n  "keys": [}\n');
    const { code, stderr } = await run(["serve", "--keys", file]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/is not valid JSON: line 3, column 12: /);
    expect(stderr.trim().split("\n")).toHaveLength(1);
  });

  test.for([["serve"], ["openapi"], ["verify"]])("%s --help prints its usage and exits 0", async ([command]) => {
    const { code, stdout } = await run([command!, "--help"]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/usage: agent-harness/);
  });

  // A budget no mock-slow reply fits in (T = 2 s). PROFILE §5 ends each such exchange 503
  // AGENT_UNAVAILABLE, conformantly: a check that needed the reply read it as a finding ("expected
  // 200; received 503"), the quick load's cap burst counted the ten admitted as not admitted, and
  // the check of two messages at once in one conversation (the waiting one needs two replies)
  // erred in every run. Now no finding: those checks judge nothing and name the budget (exit 2),
  // and the two-messages check is skipped naming --message-timeout. Its verdict rides on no
  // timing (a starved runner only adds checks the budget ends), so it runs on the untimed side.
  test("verify --message-timeout 2: no finding; the checks the budget ends name it; the two-messages check skipped", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ah-budget-"));
    const { code, stdout, stderr } = await run(
      [
        ...["verify", "--suites", "functional,quick-load", "--message-timeout", "2", "--workers", "2"],
        ...["--sections", "message.turn,limits.concurrency", "--report-dir", dir],
      ],
      {},
      // under the test's own limit (600 s), so a run that outlasts it still shows its output
      500_000,
    );
    const [runDir] = readdirSync(dir);
    expect(runDir, `${stdout.slice(-1500)}\n${stderr}`).toBeDefined();
    const results = JSON.parse(readFileSync(join(dir, runDir!, "results.json"), "utf8")) as {
      checks: { title: string; status: string; message?: string }[];
      findings: unknown[];
    };
    expect(results.findings, stdout.slice(-2000)).toEqual([]);
    expect(code, `${stdout.slice(-1500)}\n${stderr}`).toBe(2);
    const erred = results.checks.filter((c) => c.status === "error").map((c) => c.message ?? "");
    expect(
      erred.some((m) => m.includes(budgetEndedWords(2))),
      erred.join("\n"),
    ).toBe(true);
    const twoAtOnce = results.checks.find((c) => c.title.includes("two messages sent at once in one conversation"));
    expect(twoAtOnce?.status).toBe("skipped");
    expect(twoAtOnce?.message).toMatch(/--message-timeout/);
  });

  // A suite asked for whose every check the selection leaves out ran nothing: the run says so,
  // rather than list it among the suites of a green run as if it had passed
  test("verify --suites functional,property --sections routing.unknown: property ran nothing, and says so", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ah-ran-nothing-"));
    const { code, stdout, stderr } = await run(
      [
        ...["verify", "--suites", "functional,property", "--sections", "routing.unknown", "--workers", "1"],
        ...["--report-dir", dir],
      ],
      {},
      // this side runs at the lowest CPU priority: a run of seconds took two minutes in a precheck
      500_000,
    );
    expect(code, `${stdout.slice(-1500)}\n${stderr}`).toBe(0);
    expect(stdout).toMatch(/^property: ran nothing \(none of its checks is in the selection routing\.unknown\)$/m);
    expect(stdout).not.toMatch(/^functional: ran nothing/m);
    // and in the reports a CI server reads: a skipped row naming it (JUnit, HTML and the summary read the same rows)
    const [runDir] = readdirSync(dir);
    const results = JSON.parse(readFileSync(join(dir, runDir!, "results.json"), "utf8")) as {
      checks: { id: string; status: string; message?: string }[];
    };
    expect(results.checks.filter((c) => c.id.startsWith("run.suite "))).toEqual([
      expect.objectContaining({
        id: "run.suite property",
        status: "skipped",
        message: "property ran nothing: none of its checks is in the selection routing.unknown",
      }),
    ]);
  });

  test("the children run the CLI compiled for this project; a compiled tree that is not there is exit 2 in one line", async () => {
    const compiled = process.env.AGENT_HARNESS_COMPILED;
    expect(compiled && existsSync(join(compiled, "src/cli/main.js")), `compiled CLI in ${compiled}`).toBe(true);
    const { code, stderr } = await run(["--help"], { AGENT_HARNESS_COMPILED: ".build/not-compiled" });
    expect(code).toBe(2);
    expect(stderr).toMatch(/cannot load the CLI: .*\.build\/not-compiled\/src\/cli\/main\.js/);
    expect(stderr.trim().split("\n")).toHaveLength(1);
  });

  test.for([
    ["verify"],
    ["load"],
  ])("%s: an unreachable target exits 2, naming it, with no cleanup line and no report folder", async ([command]) => {
    const reportDir = mkdtempSync(join(tmpdir(), "ah-cli-unreachable-"));
    const { code, stderr, stdout } = await run([
      command!,
      "--base-url",
      "http://127.0.0.1:9/v1",
      "--api-key",
      "k",
      "--report-dir",
      reportDir,
    ]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/unreachable at http:\/\/127\.0\.0\.1:9\/v1/);
    expect(stdout).not.toMatch(/cleanup/);
    expect(readdirSync(reportDir)).toEqual([]);
  });

  test("openapi prints an OpenAPI 3.1 document with every endpoint", async () => {
    const { code, stdout } = await run(["openapi"]);
    expect(code).toBe(0);
    const doc = JSON.parse(stdout) as { openapi: string; paths: Record<string, Record<string, unknown>> };
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths).sort()).toEqual(["/agents", "/agents/{agentId}", "/agents/{agentId}/messages"]);
    expect(Object.keys(doc.paths["/agents/{agentId}"]!).sort()).toEqual(["delete", "get", "patch"]);
  });

  test("serve prints the key once and the ready line, answers, and stops on SIGTERM", async () => {
    const child = spawn(process.execPath, ["bin/agent-harness.js", "serve", "--port", "0"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    const { baseUrl, out } = await untilReady(child);
    const key = /api key: (\S+)/.exec(out)?.[1];
    expect(key).toBeDefined();
    const res = await fetch(`${baseUrl}/agents`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    await res.text();
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });
});
