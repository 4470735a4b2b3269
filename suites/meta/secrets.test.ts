import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type KeysFileInput, newApiKey } from "../../src/contract/index.js";
import { exampleTenants } from "../../src/load/capacity/plan.js";
import { startReferenceServer } from "../../src/target/embedded.js";
import { EMBEDDED_DEFAULTS } from "../../src/target/harness-target.js";
import { FLAGGED_ROLES, flagOf, KEY_ROLES } from "../../src/target/key-roles.js";
import { load, loadMerge, type VerifyRun, verify } from "./verify-run.js";

/**
 * PROFILE §6: a key never appears in what the harness writes. Every key flag is given two values
 * (`--api-key` twice and `--api-keys` two more), the capacity run serves tenants from a keys file,
 * and the reference names the presented key in a header of every answer (`key-in-header`), so
 * every recorded answer, a finding's evidence and its replay carry a key unless it is scrubbed.
 * Every file each run writes, and its output, is read for every key.
 */
const TIER = 1000;
type Flagged = (typeof FLAGGED_ROLES)[number];
const twoKeys = (role: Flagged) => [newApiKey(), newApiKey()].map((key) => ({ role, key }));
const given = FLAGGED_ROLES.flatMap(twoKeys);
const apiKeys = twoKeys("main");
const tenants = exampleTenants(3, 2, 12);
const accountOf = (role: Flagged) => `acct_${KEY_ROLES[role].account}`;

const keysFile: KeysFileInput = {
  accounts: [
    ...[...new Set(FLAGGED_ROLES.map(accountOf))].map((id) => ({
      id,
      tierLimit: id === accountOf("tierBurst") ? 100 : TIER,
      messageQuota: id === accountOf("quota") ? 5 : null,
    })),
    ...tenants.accounts,
  ],
  keys: [
    ...[...given, ...apiKeys].map(({ role, key }) => ({
      key,
      account: accountOf(role),
      permissions: [...KEY_ROLES[role].permissions],
    })),
    ...tenants.keys,
  ],
};
const secrets = keysFile.keys.map((k) => k.key);

const keyFlags = [
  ...given.flatMap(({ role, key }) => [flagOf(role), key]),
  "--api-keys",
  apiKeys.map((k) => k.key).join(","),
  "--load-tier",
  String(TIER),
  "--tier-burst-tier",
  "100",
  "--tier",
  String(TIER),
  "--reference-faults",
];

/** Every file under `dir`, with its text. */
function filesUnder(dir: string): { file: string; text: string }[] {
  return readdirSync(dir).flatMap((name) => {
    const file = join(dir, name);
    return statSync(file).isDirectory() ? filesUnder(file) : [{ file, text: readFileSync(file, "utf8") }];
  });
}

/** The files a run wrote (and its output) that hold a key, and which. */
function leaks(run: VerifyRun, summary: string): string[] {
  const written = [
    ...filesUnder(run.runDir),
    { file: "stdout+stderr", text: run.output },
    { file: summary, text: readIfAny(summary) },
  ];
  return written.flatMap(({ file, text }) => secrets.filter((key) => text.includes(key)).map((key) => `${file}: ${key}`));
}
const readIfAny = (file: string) => {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
};

let server: Awaited<ReturnType<typeof startReferenceServer>>;
let target: string[];
const summaryDir = mkdtempSync(join(tmpdir(), "agent-harness-secrets-"));
const summaryFile = (name: string) => join(summaryDir, `${name}.md`);

beforeAll(async () => {
  server = await startReferenceServer({
    keys: keysFile,
    windowSeconds: EMBEDDED_DEFAULTS.windowSeconds,
    faults: ["key-in-header"],
  });
  target = ["--base-url", server.baseUrl, "--rate-window", String(EMBEDDED_DEFAULTS.windowSeconds), ...keyFlags];
});
afterAll(() => server?.close());

describe("meta: no key in anything a run writes", { timeout: 300_000 }, () => {
  test("verify: junit, json, html, replay scripts, job summary, output", async () => {
    const run = await verify([...target, "--suites", "functional", "--sections", "6", "--profile", "smoke"], 1, {
      GITHUB_STEP_SUMMARY: summaryFile("verify"),
    });
    expect(run.results.findings?.length, run.output.slice(-2000)).toBeGreaterThan(0); // the echoed key is evidence
    expect(filesUnder(run.runDir).some((f) => /replay/.test(f.file))).toBe(true);
    expect(leaks(run, summaryFile("verify"))).toEqual([]);
  });

  test("load, capacity and merge: load.json, report.html, results, output", async () => {
    const quick = await load([...target, "--scenario", "quota-headers,tier-mixed"], 1, {
      GITHUB_STEP_SUMMARY: summaryFile("load"),
    });
    expect(leaks(quick, summaryFile("load"))).toEqual([]);

    const tenantsFile = join(summaryDir, "tenants.json");
    writeFileSync(tenantsFile, JSON.stringify(tenants));
    const capacity = ["--scenario", "capacity", "--keys-file", tenantsFile, "--duration", "3s"];
    // shards numbered from 1, as the test runners number them (--shard 1/2, 2/2)
    const shards = await Promise.all(
      [1, 2].map((i) =>
        load([...target, ...capacity, "--shard", `${i}/2`], 1, { GITHUB_STEP_SUMMARY: summaryFile(`shard-${i}`) }),
      ),
    );
    for (const [i, shard] of shards.entries()) expect(leaks(shard, summaryFile(`shard-${i + 1}`))).toEqual([]);
    const merged = await loadMerge(
      shards.map((s) => s.runDir),
      { GITHUB_STEP_SUMMARY: summaryFile("merge") },
    );
    expect(merged.results.checks.length, merged.output.slice(-2000)).toBeGreaterThan(0);
    expect(leaks(merged, summaryFile("merge"))).toEqual([]);
  });
});
