/**
 * One defect, one red item: runs `verify --suites functional` on each reference fault's PROFILE
 * section (the embedded server with that one fault injected) and prints, per fault, the red
 * items a reader meets — findings, failed checks no finding explains, harness errors — and
 * whether the first finding cites the clause the fault breaks.
 *
 *   npx tsx scripts/fault-red-items.ts [--concurrency 3] [fault …]
 *
 * A survey, not a test: the meta suite asserts the bound on a chosen set of faults.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { CLAUSE_BY_ID } from "../src/contract/index.js";
import { isUnderFinding, type ResultsJson } from "../src/report/index.js";
import { CONCURRENCY_FAULTS, FAULTS, LOAD_FAULTS, PROPERTY_FAULTS, RARE_PATH_FAULTS } from "../src/target/embedded.js";

const { values, positionals } = parseArgs({
  options: { concurrency: { type: "string", default: "3" } },
  allowPositionals: true,
});
const names = positionals.length
  ? positionals
  : Object.keys(FAULTS).filter(
      (name) =>
        !(name in LOAD_FAULTS) && !(name in CONCURRENCY_FAULTS) && !(name in PROPERTY_FAULTS) && !(name in RARE_PATH_FAULTS),
    );

interface Row {
  fault: string;
  clause: string;
  red: number;
  findings: number;
  failed: number;
  errors: number;
  firstCites: boolean;
  seconds: number;
  /** the exit code, or the last line of a run that wrote no report */
  said: string;
}

function survey(fault: string): Promise<Row> {
  const clause = FAULTS[fault]?.clause ?? "?";
  const section = CLAUSE_BY_ID.get(clause)?.section ?? "§1";
  const dir = mkdtempSync(join(tmpdir(), "agent-harness-red-"));
  const started = performance.now();
  const args = ["bin/agent-harness.js", "verify", "--fault", fault, "--sections", section, "--suites", "functional"];
  return new Promise((resolve) => {
    const options = { timeout: 600_000, maxBuffer: 64 * 1024 * 1024 };
    execFile(process.execPath, [...args, "--report-dir", dir, "--seed", "1", "--workers", "1"], options, (err, _out, stderr) => {
      const [run] = readdirSync(dir);
      const seconds = Math.round((performance.now() - started) / 1000);
      if (run === undefined) {
        // no report: the run stopped before any check (exit 2), which the survey shows as it is
        const said = stderr.trim().split("\n").at(-1) ?? "";
        resolve({ fault, clause, red: -1, findings: 0, failed: 0, errors: 0, firstCites: false, seconds, said });
        return;
      }
      const results: ResultsJson = JSON.parse(readFileSync(join(dir, run, "results.json"), "utf8"));
      rmSync(dir, { recursive: true, force: true });
      const findings = results.findings ?? [];
      const failed = results.checks.filter((c) => c.status === "failed" && !isUnderFinding(c)).length;
      const errors = results.checks.filter((c) => c.status === "error").length;
      resolve({
        fault,
        clause,
        red: findings.length + failed + errors,
        findings: findings.length,
        failed,
        errors,
        firstCites: findings[0]?.clauseIds.includes(clause) ?? false,
        seconds,
        said: err ? `exit ${err.code}` : "exit 0",
      });
    });
  });
}

const rows: Row[] = [];
const queue = [...names];
await Promise.all(
  Array.from({ length: Number(values.concurrency) }, async () => {
    for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
      const row = await survey(name);
      rows.push(row);
      console.log(
        `${row.red >= 0 && row.red <= 3 ? "ok " : "RED"} ${row.fault} (${row.clause}): ${row.red} red = ${row.findings} findings + ${row.failed} failed + ${row.errors} errors; first cites the clause: ${row.firstCites}; ${row.said} (${row.seconds} s)`,
      );
    }
  }),
);
const over = rows.filter((r) => r.red > 3 || r.red < 0);
const elsewhere = rows.filter((r) => r.red > 0 && !r.firstCites);
const missed = rows.filter((r) => r.red === 0);
console.log(`\n${rows.length - over.length} of ${rows.length} faults: at most 3 red items`);
if (over.length) console.log(`more than 3: ${over.map((r) => `${r.fault} (${r.red})`).join(", ")}`);
if (elsewhere.length)
  console.log(`first finding under another clause than the fault's: ${elsewhere.map((r) => r.fault).join(", ")}`);
if (missed.length)
  console.log(`not caught by the functional suites of the fault's section: ${missed.map((r) => r.fault).join(", ")}`);
