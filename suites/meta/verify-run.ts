import { type ChildProcess, execFile, fork, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inject } from "vitest";
import { type ResultsJson, unexplainedChecks } from "../../src/report/index.js";

/**
 * One `agent-harness verify` in a child process, the CLI's `main` as CI runs it (in a warm CLI
 * when it can: below): its exit code, results.json and output.
 */
export interface VerifyRun {
  code: number | null;
  results: ResultsJson;
  output: string;
  /** reports/<run-id>/ of this run (replay files are written there) */
  runDir: string;
}

/**
 * T (seconds) of a capacity drive with the stream hog in 12 s: its messages end twice inside its
 * flood of about 1.5 s (the meta capacity rows, the matrix's floods).
 */
export const FLOOD_DRIVE_MESSAGE_TIMEOUT_SECONDS = 0.5;

/** `env` is added to this process's (a proxy's variables, GITHUB_STEP_SUMMARY for a run's job summary). */
export function verify(args: string[], seed = 1, env: NodeJS.ProcessEnv = {}): Promise<VerifyRun> {
  return harnessRun(["verify", "--seed", String(seed), ...args], env);
}

/**
 * One `agent-harness load` in a child process of its own (never a warm CLI: a load run judges its
 * generator's headroom, its scheduler's lateness among it, which another run's heap and timers
 * left in the process would change): the same, and its load.json beside results.json.
 */
export function load(args: string[], seed = 1, env: NodeJS.ProcessEnv = {}): Promise<VerifyRun> {
  return harnessRun(["load", "--seed", String(seed), ...args], env, "own process");
}

/** `agent-harness load merge` of the shards' report folders, as a CI merge step runs it. */
export function loadMerge(dirs: string[], env: NodeJS.ProcessEnv = {}): Promise<VerifyRun> {
  return harnessRun(["load", "merge", ...dirs], env, "own process");
}

function harnessRun(args: string[], env: NodeJS.ProcessEnv = {}, where?: "own process"): Promise<VerifyRun> {
  const reportDir = scratchDir("agent-harness-meta-");
  const argv = [...args, "--report-dir", reportDir];
  // a run in this process's environment goes to a warm CLI; one that needs its own, to a process of its own
  const ran = Object.keys(env).length || !WARM || where ? cliProcess(argv, env) : warmRun(argv);
  return ran.then(({ code, output, failure }) => {
    const runs = readdirSync(reportDir);
    if (runs.length !== 1) throw new Error(`no report written (${failure})\n${output}`);
    const runDir = join(reportDir, runs[0]!);
    let results: ResultsJson;
    try {
      results = JSON.parse(readFileSync(join(runDir, "results.json"), "utf8")) as ResultsJson;
    } catch (e) {
      // a run killed by its timeout writes no results.json: a rejection, never a throw that ends the caller's process
      throw new Error(`no results.json in ${runDir} (${failure ?? (e as Error).message})\n${output.slice(-4000)}`);
    }
    return { code, results, output, runDir };
  });
}

/**
 * A new folder for a test's files (a run's reports, a keys file): inside a test project, in the
 * project's shared folder, which its globalSetup deletes after a run in which no test failed
 * (suites/meta/compiled-cli.ts); outside a test (the matrix script), in the temporary folder, kept.
 */
export function scratchDir(prefix: string): string {
  let parent = tmpdir();
  try {
    parent = inject("sharedDir") ?? parent;
  } catch {
    // not in a test worker
  }
  return mkdtempSync(join(parent, prefix));
}

/** How a run in a child ended: its exit code, its stdout and stderr, and why it failed if it did. */
interface Ended {
  code: number | null;
  output: string;
  failure?: string;
}

/**
 * A run of the CLI as a process of its own (bin/agent-harness.js), as CI runs it. Its stdout and
 * stderr in the order they came, as a terminal shows them: a load run's progress goes to stderr
 * and its verdict to stdout, and the last line a reader sees is the verdict's.
 */
function cliProcess(argv: string[], env: NodeJS.ProcessEnv): Promise<Ended> {
  return new Promise((resolve) => {
    // past its time it gets SIGTERM, as execFile's timeout sent: the run deletes what it made, then ends
    const child = spawn(process.execPath, ["bin/agent-harness.js", ...argv], {
      env: { ...process.env, NO_COLOR: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"],
      timeout: RUN_TIMEOUT_MS,
      killSignal: "SIGTERM",
    });
    const chunks: string[] = [];
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => chunks.push(chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => chunks.push(chunk));
    let failed: string | undefined;
    child.once("error", (err) => {
      failed = err.message;
    });
    child.once("close", (code, signal) => {
      const failure = failed ?? (code === 0 ? undefined : signal ? `killed by ${signal}` : `exit ${code}`);
      resolve({ code, output: chunks.join(""), ...(failure ? { failure } : {}) });
    });
  });
}

const RUN_TIMEOUT_MS = 600_000;

/**
 * Warm CLIs (suites/meta/warm-runner.mjs): each runs one run at a time, and a run starts a new one
 * when every other is busy, so runs overlap exactly as processes of their own would. A process
 * whose project compiled the CLI (AGENT_HARNESS_COMPILED) uses them; AGENT_HARNESS_COLD=1 turns
 * them off (every run a process of its own, as before).
 */
const WARM = !!process.env.AGENT_HARNESS_COMPILED && process.env.AGENT_HARNESS_COLD !== "1";
const idle: ChildProcess[] = [];
let nextId = 0;

function warmRunner(): Promise<ChildProcess> {
  const ready = idle.pop();
  if (ready?.connected) return Promise.resolve(ready);
  return new Promise((resolve, reject) => {
    const child = fork("suites/meta/warm-runner.mjs", [], { env: { ...process.env, NO_COLOR: "1" }, stdio: "inherit" });
    // an idle runner keeps no process alive (the run's timer does while it runs); one starting does,
    // or a script with nothing else to wait on (the matrix's, on the embedded target) ends before it is ready
    child.once("message", () => {
      child.unref();
      child.channel?.unref();
      resolve(child);
    });
    child.once("exit", (code) => reject(new Error(`the warm runner ended (code ${code}) before it was ready`)));
  });
}

async function warmRun(argv: string[]): Promise<Ended> {
  const child = await warmRunner();
  const id = nextId++;
  return new Promise((resolve) => {
    const done = (ended: Ended, keep: boolean) => {
      clearTimeout(timer);
      child.off("message", answer);
      child.off("exit", died);
      if (keep) idle.push(child);
      else child.kill("SIGKILL");
      resolve(ended);
    };
    const answer = (message: { id?: number; code?: number; output?: string }) => {
      if (message.id === id) done({ code: message.code ?? null, output: message.output ?? "" }, true);
    };
    const died = (code: number | null, signal: string | null) =>
      done({ code, output: "", failure: `the warm runner ended (code ${code}, signal ${signal}) during the run` }, false);
    const timer = setTimeout(
      () => done({ code: null, output: "", failure: `the run outlasted ${RUN_TIMEOUT_MS / 1000} s and was killed` }, false),
      RUN_TIMEOUT_MS,
    );
    child.on("message", answer);
    child.once("exit", died);
    child.send({ id, argv });
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

/** Calls of the returned function run at most `n` at a time, the others waiting their turn in order. */
export function atMost(n: number) {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async <T>(call: () => Promise<T>): Promise<T> => {
    // a call that ends hands its place to the first waiting, so no later caller can take it first
    if (running < n) running++;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await call();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}
