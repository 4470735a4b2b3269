/**
 * How far one generator process goes: `load --scenario capacity` against a reference server in a
 * process of its own, with more and more tenants, until the headroom line says the figures are
 * bounded by the generator (it sent late: p99 over HEADROOM_LAG_MS after due). Then the merge
 * time of 3 and 10 shards of one capacity run.
 *
 *   npx tsx scripts/bench-capacity.ts [--steps 10,20,40,80,160] [--keys-per-account 4] [--tier 60]
 *                                     [--duration 15s] [--json]
 *
 * Each step's tenants are the first N accounts of one keys file the server holds; W = 2 s.
 */
import { execFile, spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { KeysFile } from "../src/contract/index.js";
import { exampleTenants } from "../src/load/capacity/plan.js";
import { HEADROOM_LAG_MS } from "../src/load/capacity/tally.js";
import type { LoadRun } from "../src/load/run-of-scenarios.js";
import { mergeShardRuns, readShardRuns } from "../src/load/shard/merge.js";

const { values } = parseArgs({
  options: {
    steps: { type: "string", default: "10,20,40,80,160" },
    "keys-per-account": { type: "string", default: "4" },
    tier: { type: "string", default: "60" },
    duration: { type: "string", default: "15s" },
    json: { type: "boolean", default: false },
  },
});
const steps = values.steps.split(",").map(Number);
const keysPerAccount = Number(values["keys-per-account"]);
const tier = Number(values.tier);
const BIN = "bin/agent-harness.js";
const WINDOW = "2";
const scratch = mkdtempSync(join(tmpdir(), "bench-capacity-"));

const all = exampleTenants(Math.max(...steps), keysPerAccount, tier);
const keysFile = join(scratch, "all.json");
writeFileSync(keysFile, JSON.stringify(all));
const subset = (accounts: number): KeysFile => {
  const ids = new Set(all.accounts.slice(0, accounts).map((a) => a.id));
  return { accounts: all.accounts.filter((a) => ids.has(a.id)), keys: all.keys.filter((k) => ids.has(k.account)) };
};

function harness(args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) =>
    execFile(process.execPath, [BIN, ...args], { maxBuffer: 64 * 1024 * 1024, timeout: 600_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, out: stdout + stderr }),
    ),
  );
}

const runFolder = (reportDir: string) => join(reportDir, readdirSync(reportDir)[0]!);
const capacityOf = (dir: string) =>
  (JSON.parse(readFileSync(join(dir, "load.json"), "utf8")) as LoadRun).scenarios.find((s) => s.id === "capacity");

// the reference in a process of its own: the generator's headroom is the generator's alone
const server = spawn(process.execPath, [BIN, "serve", "--port", "0", "--keys", keysFile, "--window-seconds", WINDOW], {
  stdio: ["ignore", "pipe", "inherit"],
});
const baseUrl = await new Promise<string>((ready, fail) => {
  let out = "";
  server.stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString();
    const m = /listening on (http:\/\/\S+\/v1)/.exec(out);
    if (m) ready(m[1]!);
  });
  server.once("exit", (code) => fail(new Error(`serve exited ${code}: ${out}`)));
});

const rows: Array<Record<string, number | string | boolean>> = [];
try {
  const target = ["--base-url", baseUrl, "--api-key", all.keys[0]!.key, "--rate-window", WINDOW];
  let lastShard: string | undefined;
  for (const accounts of steps) {
    const file = join(scratch, `tenants-${accounts}.json`);
    writeFileSync(file, JSON.stringify(subset(accounts)));
    const reportDir = join(scratch, `step-${accounts}`);
    // each step is one shard of one (--shard 0/1): its report is a merge's input below
    const run = await harness([
      "load",
      ...target,
      ...["--scenario", "capacity", "--keys-file", file, "--duration", values.duration, "--shard", "0/1"],
      ...["--report-dir", reportDir],
    ]);
    const report = capacityOf(runFolder(reportDir));
    const c = report?.capacity;
    if (!c || !report) throw new Error(`step ${accounts}: no capacity figures (exit ${run.code})\n${run.out.slice(-2000)}`);
    const row = {
      accounts,
      keys: c.settings.keys,
      plannedPerSecond: c.settings.offeredPerSecond,
      sentPerSecond: Math.round(c.counts.sent / c.settings.durationSeconds),
      sendLagP99Ms: c.headroom.sendLagP99Ms,
      eventLoopLagP99Ms: report.generator.eventLoopLagP99Ms,
      cpuShare: report.generator.cpuShare,
      bound: c.headroom.bound,
      unexpected: c.counts.unexpected,
    };
    rows.push(row);
    if (!values.json)
      console.log(
        `${accounts} accounts, ${row.keys} keys: planned ${row.plannedPerSecond} req/s, sent ${row.sentPerSecond}/s; sends p99 ${row.sendLagP99Ms} ms late; event loop p99 ${row.eventLoopLagP99Ms} ms, CPU ${row.cpuShare}; ${row.bound ? "BOUND by the generator" : "kept its schedule"}`,
      );
    lastShard = runFolder(reportDir);
    if (row.bound) break;
  }
  const kept = rows.filter((r) => !r.bound).at(-1);
  const summary = kept
    ? `one generator process kept its schedule up to ${kept.keys} keys (${kept.accounts} accounts), ${kept.sentPerSecond} req/s (headroom line: sends p99 ≤ ${HEADROOM_LAG_MS} ms late)`
    : `the generator was bound at the first step (${steps[0]} accounts)`;

  // merge time: the last step's report as 3 and 10 shards (the same figures, shard i of n each)
  const merges: Record<string, number> = {};
  for (const n of [3, 10]) {
    const dir = join(scratch, `merge-${n}`);
    for (let i = 0; i < n; i++) {
      const copy = join(dir, `shard-${i}`);
      mkdirSync(copy, { recursive: true });
      cpSync(lastShard!, copy, { recursive: true });
      const loadJson = join(copy, "load.json");
      const loadRun = JSON.parse(readFileSync(loadJson, "utf8")) as LoadRun;
      for (const s of loadRun.scenarios) if (s.mergeable) s.mergeable.settings.shard = { index: i, count: n };
      writeFileSync(loadJson, JSON.stringify(loadRun));
    }
    const times: number[] = [];
    for (let round = 0; round < 5; round++) {
      const started = performance.now();
      mergeShardRuns(readShardRuns([dir]), `bench-${n}`);
      times.push(performance.now() - started);
    }
    merges[`merge${n}Ms`] = Math.round(times.sort((a, b) => a - b)[2]! * 10) / 10;
    const started = performance.now();
    const cli = await harness(["load", "merge", dir, "--report-dir", join(scratch, `merged-${n}`)]);
    merges[`merge${n}CliMs`] = Math.round(performance.now() - started);
    if (cli.code !== 0) console.log(`load merge of ${n} shards exited ${cli.code}`);
  }
  if (values.json) console.log(JSON.stringify({ steps: rows, merges }, null, 2));
  else {
    console.log(summary);
    console.log(
      `merge of 3 shards: ${merges.merge3Ms} ms (read and merge, median of 5), ${merges.merge3CliMs} ms as \`load merge\` (node start-up and report writing included); of 10: ${merges.merge10Ms} ms, ${merges.merge10CliMs} ms`,
    );
  }
} finally {
  server.kill("SIGTERM");
  rmSync(scratch, { recursive: true, force: true });
}
