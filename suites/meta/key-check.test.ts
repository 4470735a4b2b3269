import { execFile } from "node:child_process";
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startReferenceServer } from "../../src/target/embedded.js";
import { EMBEDDED_DEFAULTS, referenceKeys } from "../../src/target/harness-target.js";
import type { StartedReference } from "../../src/target/types.js";

/**
 * Before the first check a deployment's keys are checked with a few requests; a wrong key is one
 * line naming its flag and exit 2, before any check and before the plan (`--dry-run` or not).
 * The requests are counted by a pass-through proxy in front of a reference server.
 */
const { file, keys } = referenceKeys({ ...EMBEDDED_DEFAULTS, workers: 1, mainKeys: 2 });
const set = keys[0]!;
let server: StartedReference;
let proxy: ReturnType<typeof createServer>;
let baseUrl = "";
let sent = 0;

beforeAll(async () => {
  server = await startReferenceServer({ keys: file, windowSeconds: 60 });
  const upstream = new URL(server.baseUrl);
  proxy = createServer((req, res) => {
    sent++;
    const out = request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(out);
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  await new Promise((resolve) => proxy.close(resolve));
  await server.close();
});

function verify(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["bin/agent-harness.js", "verify", "--base-url", baseUrl, "--tier", String(EMBEDDED_DEFAULTS.tierLimit), ...args],
      { env: { ...process.env, NO_COLOR: "1" }, timeout: 120_000 },
      (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe("meta: keys are checked before the first check", () => {
  test.for([
    ["an unknown key", ["--api-key", "ak_not_a_key_of_this_server_0000"], /^agent-harness: --api-key: .*401/, 1],
    [
      "a read-only key as main",
      ["--api-key", set.readOnly!, "--dry-run"],
      /^agent-harness: --api-key: this key lacks agents:write/,
      4,
    ],
    [
      "the main key as the other account",
      ["--api-key", set.main, "--other-account-key", set.main],
      /^agent-harness: --other-account-key: the same key as --api-key/,
      0,
    ],
    [
      "a second key of the main account as the other account",
      ["--api-key", set.main, "--other-account-key", set.mainKeys![1]!, "--dry-run"],
      /^agent-harness: --other-account-key: .*same account/,
      8,
    ],
  ] as const)("%s: one line naming the flag, exit 2", { timeout: 120_000 }, async ([, args, line, requests]) => {
    sent = 0;
    const { code, stdout, stderr } = await verify([...args]);
    expect(stderr.trim().split("\n"), stderr).toHaveLength(1);
    expect(stderr).toMatch(line);
    expect(code).toBe(2);
    expect(stdout).not.toMatch(/^plan:|^\[1\//m); // no plan, no check
    expect(sent).toBe(requests);
  });

  test("right keys: the dry run checks them and stops before a check", { timeout: 300_000 }, async () => {
    sent = 0;
    const args = ["--api-key", set.main, "--read-only-key", set.readOnly!, "--other-account-key", set.otherAccount!];
    const { code, stdout } = await verify([...args, "--dry-run", "--suites", "functional", "--profile", "smoke"]);
    expect(stdout).toMatch(/^keys: --read-only-key reads and may not write \(403 to a create\)$/m);
    expect(stdout).toMatch(/^keys: --other-account-key is another account/m);
    expect(stdout).toMatch(/^plan: needs ≥ \d+ windows/m);
    expect(stdout).toMatch(/^will run: \d+ checks/m);
    expect(stdout).toMatch(/^dry run: \d+ requests checked the keys/m);
    expect(code).toBe(0);
    expect(sent).toBeLessThanOrEqual(25);
  });
});
