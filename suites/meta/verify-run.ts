import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ResultsJson, unexplainedChecks } from "../../src/report/index.js";

/** One `agent-harness verify` in a child process, as CI runs it: its exit code, results.json and output. */
export interface VerifyRun {
  code: number | null;
  results: ResultsJson;
  output: string;
  /** reports/<run-id>/ of this run (replay files are written there) */
  runDir: string;
}

/** `env` is added to this process's (a proxy's variables, GITHUB_STEP_SUMMARY for a run's job summary). */
export function verify(args: string[], seed = 1, env: NodeJS.ProcessEnv = {}): Promise<VerifyRun> {
  return harnessRun(["verify", "--seed", String(seed), ...args], env);
}

/** One `agent-harness load` in a child process: the same, and its load.json beside results.json. */
export function load(args: string[], seed = 1, env: NodeJS.ProcessEnv = {}): Promise<VerifyRun> {
  return harnessRun(["load", "--seed", String(seed), ...args], env);
}

/** `agent-harness load merge` of the shards' report folders, as a CI merge step runs it. */
export function loadMerge(dirs: string[], env: NodeJS.ProcessEnv = {}): Promise<VerifyRun> {
  return harnessRun(["load", "merge", ...dirs], env);
}

function harnessRun(args: string[], env: NodeJS.ProcessEnv = {}): Promise<VerifyRun> {
  const reportDir = mkdtempSync(join(tmpdir(), "agent-harness-meta-"));
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["bin/agent-harness.js", ...args, "--report-dir", reportDir],
      { env: { ...process.env, NO_COLOR: "1", ...env }, maxBuffer: 64 * 1024 * 1024, timeout: 600_000 },
      (err, stdout, stderr) => {
        const runs = readdirSync(reportDir);
        if (runs.length !== 1) return reject(new Error(`no report written (${err?.message})\n${stdout}\n${stderr}`));
        const runDir = join(reportDir, runs[0]!);
        let results: ResultsJson;
        try {
          results = JSON.parse(readFileSync(join(runDir, "results.json"), "utf8")) as ResultsJson;
        } catch (e) {
          // a run killed by the timeout above writes no results.json: a rejection, never a throw that ends the caller's process
          return reject(
            new Error(
              `no results.json in ${runDir} (${err?.message ?? (e as Error).message})\n${stdout.slice(-2000)}\n${stderr.slice(-2000)}`,
            ),
          );
        }
        resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, results, output: `${stdout}\n${stderr}`, runDir });
      },
    );
  });
}

/** A run that may end before it writes a report (a target it cannot reach): its exit code and output. */
export function harnessExit(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["bin/agent-harness.js", ...args],
      { env: { ...process.env, NO_COLOR: "1", ...env }, maxBuffer: 64 * 1024 * 1024, timeout: 600_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, output: `${stdout}\n${stderr}` }),
    );
  });
}

export const failedIn = (run: VerifyRun) => run.results.checks.filter((c) => c.status === "failed");

/** What a reader must act on: findings, failed checks no finding explains, harness errors. One defect: at most 3. */
export const redItems = (run: VerifyRun) => (run.results.findings?.length ?? 0) + unexplainedChecks(run.results).length;
