import { parseArgs } from "node:util";
import fc from "fast-check";
import {
  configArbitrary,
  type MatrixConfig,
  type Outcome,
  replayCommand,
  runConfig,
  targetUnavailable,
} from "../suites/matrix/matrix.js";

/**
 * The full configuration matrix (suites/matrix/matrix.ts): draws configurations with fast-check
 * from --seed and runs them, a few at a time, until --runs are done or --time-budget is spent
 * (no run starts after it). Prints each configuration, each outcome, then the figures and every
 * broken promise with the command that replays it.
 *   npm run matrix -- --seed 1 --runs 40 --time-budget 30m [--concurrency 2]
 *   npm run matrix -- --config '<json>' --seed S        (one configuration again)
 */
const USAGE =
  "usage: npm run matrix -- [--seed N] [--runs N] [--time-budget 30m|90s|N] [--concurrency N] [--skip N] [--config JSON]";

function fail(message: string): never {
  process.stderr.write(`matrix: ${message}\n${USAGE}\n`);
  process.exit(2);
}

function seconds(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(s|m|h)?$/.exec(text.trim());
  if (!m) fail(`--time-budget takes N, Ns, Nm or Nh, not ${text}`);
  return Number(m[1]) * { s: 1, m: 60, h: 3600 }[(m[2] ?? "s") as "s" | "m" | "h"];
}

function count(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) fail(`--${name} takes a whole number ≥ 1, not ${text}`);
  return n;
}

let values: Record<string, string | undefined>;
try {
  ({ values } = parseArgs({
    options: {
      seed: { type: "string" },
      runs: { type: "string" },
      "time-budget": { type: "string" },
      concurrency: { type: "string" },
      config: { type: "string" },
      skip: { type: "string" },
    },
  }));
} catch (err) {
  fail(err instanceof Error ? err.message : String(err));
}
const seed = values.seed === undefined ? Date.now() % 2 ** 31 : count("seed", values.seed, 1);
const budgetMs = seconds(values["time-budget"] ?? "30m") * 1000;
const concurrency = count("concurrency", values.concurrency, 2);
let configs: MatrixConfig[];
if (values.config !== undefined) {
  try {
    configs = [JSON.parse(values.config) as MatrixConfig]; // cast: a replay line this script printed
  } catch {
    fail("--config takes the JSON a replay line shows");
  }
} else configs = fc.sample(configArbitrary(), { seed, numRuns: count("runs", values.runs, 40) });

const describe = (c: MatrixConfig) =>
  [
    c.command,
    c.selection.join(","),
    c.sweep && `sweep ${c.sweep} of a killed run's, a running run's and another client's agents`,
    c.profile && `--profile ${c.profile}`,
    c.bail && "--bail",
    c.sections && `--sections ${c.sections.join(",")}`,
    c.referenceFaults && "--reference-faults",
    `keys ${c.keySet}`,
    `target ${c.target}`,
    c.network !== "none" && `network ${c.network}`,
    c.busy && "another client busy",
    c.tls && `TLS (${c.tls === "mutual" ? "--ca-file, --client-cert" : "--ca-file"})`,
    c.out && "--out prometheus-rw",
    c.shard && "--shard 1/2",
    c.compare && "then load compare",
    c.flood && `--flood ${c.flood.shapes.join(",")} at ${c.flood.rate}/s, ${c.flood.sockets} sockets`,
    c.pinned && "serve pinned, --service-cores",
    c.failingModel && "its model fails every message",
    c.idField && `its identifier field ${c.idField} (--id-field)`,
    c.fewestDetails && "its 400s name a field only where PROFILE asks",
    c.proxy === "through" && "through a forward proxy (HTTP(S)_PROXY)",
    c.proxy === "bypassed" && "proxy variables bypassed (NO_PROXY=127.0.0.0/8)",
    c.tenantMainKey && "--api-key a tenant's key",
    `W=${c.windowSeconds} T=${c.messageTimeoutSeconds}`,
  ]
    .filter(Boolean)
    .join(" · ");

const out = process.stdout;
out.write(
  `matrix: seed ${seed}, ${configs.length} configuration(s) drawn, ${concurrency} at a time, budget ${budgetMs / 1000} s\n`,
);
const started = Date.now();
const outcomes: Outcome[] = [];
/** configurations whose target this machine cannot start (a container without Docker), said as they come */
let skipped = 0;
// --skip N: resume a seed's draw after its first N configurations
let next = values.skip === undefined ? 0 : count("skip", values.skip, 1);
async function worker() {
  while (next < configs.length && Date.now() - started < budgetMs) {
    const i = next++;
    const config = configs[i]!;
    const runSeed = seed + i;
    let outcome: Outcome;
    try {
      // under CI=true a tool the row needs (tinyproxy) missing is a failure of the row, not a skip
      const unavailable = await targetUnavailable(config);
      if (unavailable) {
        skipped++;
        out.write(`[${i + 1}/${configs.length}] skipped, ${unavailable}: ${describe(config)}\n`);
        continue;
      }
      out.write(`[${i + 1}/${configs.length}] start ${describe(config)}\n`);
      outcome = await runConfig(config, runSeed);
    } catch (err) {
      outcome = {
        config,
        seed: runSeed,
        code: null,
        findings: 0,
        ran: 0,
        broken: [`the matrix could not run it: ${err instanceof Error ? err.message : String(err)}`],
        durationMs: 0,
        lastLine: "",
      };
    }
    outcomes.push(outcome);
    const verdict = outcome.broken.length ? "BROKEN" : "ok";
    out.write(
      `[${i + 1}/${configs.length}] ${verdict} exit ${outcome.code}, ${outcome.ran} ran${outcome.promised !== undefined ? ` of ${outcome.promised} promised` : ""}, ${outcome.findings} finding(s), ${Math.round(outcome.durationMs / 1000)} s — ${describe(config)}\n`,
    );
    if (outcome.code !== 0 && !outcome.broken.length) out.write(`    last line: ${outcome.lastLine}\n`);
    for (const b of outcome.broken)
      out.write(`    ✗ ${b}\n      last line: ${outcome.lastLine}\n      replay: ${replayCommand(outcome)}\n`);
  }
}
await Promise.all(Array.from({ length: concurrency }, worker));
const failures = outcomes.filter((o) => o.broken.length);
out.write(
  `\nmatrix: seed ${seed}; ${configs.length} configurations drawn, ${outcomes.length} run${skipped ? `, ${skipped} skipped (no target here)` : ""}, ${Math.round((Date.now() - started) / 1000)} s; ${failures.length} broke a promise\n`,
);
for (const o of failures)
  out.write(`  ✗ ${describe(o.config)}\n    ${o.broken.join("\n    ")}\n    replay: ${replayCommand(o)}\n`);
// a draw (or a replay) whose every target this machine lacks ran nothing: no green for it
if (!outcomes.length && skipped) {
  out.write(`nothing ran: every configuration needs a target this machine cannot start\n`);
  process.exit(2);
}
process.exit(failures.length ? 1 : 0);
