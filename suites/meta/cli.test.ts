import { execFile, spawn } from "node:child_process";
import { describe, expect, test } from "vitest";

/** The CLI's contract with CI: exit 0 pass, 1 a check failed, 2 bad usage or unreachable target. */
function run(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["bin/agent-harness.js", ...args],
      { env: { ...process.env, NO_COLOR: "1", ...env }, timeout: 120_000 },
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
    [["openapi", "extra"], /takes no arguments/],
  ] as const)("%j exits 2 with a readable message", async ([args, message]) => {
    const { code, stderr } = await run([...args]);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
    expect(stderr).not.toMatch(/\n\s+at /); // a message, not a stack trace
  });

  test("an unreachable target exits 2, naming it", async () => {
    const { code, stderr } = await run([
      "verify",
      "--base-url",
      "http://127.0.0.1:9/v1",
      "--api-key",
      "k",
      "--report-dir",
      "/tmp/ah-cli-test",
    ]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/unreachable at http:\/\/127\.0\.0\.1:9\/v1/);
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
    let out = "";
    const ready = new Promise<string>((resolve, reject) => {
      child.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        const m = /listening on (http:\/\/\S+\/v1)/.exec(out);
        if (m) resolve(m[1]!);
      });
      child.once("exit", (code) => reject(new Error(`serve exited ${code} before ready: ${out}`)));
    });
    const baseUrl = await ready;
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
