import { execFile, fork } from "node:child_process";
import { describe, expect, test } from "vitest";
import { INTERNAL_FAULTS } from "../../src/run/internal-fault.js";
import { scratchDir } from "./verify-run.js";

/**
 * The warm CLI the meta, network and matrix suites run their hundreds of runs in
 * (suites/meta/warm-runner.mjs) must answer as the CLI in a process of its own does: the same exit
 * code and output, a crash included. Otherwise every meta verdict read through it would be of
 * something else than what a user runs.
 */

interface Ended {
  code: number | null;
  output: string;
}

const argvOf = (extra: string[]) => [...extra, "--report-dir", scratchDir("agent-harness-warm-")];

function cold(argv: string[], env: NodeJS.ProcessEnv): Promise<Ended> {
  return new Promise((resolve) =>
    execFile(
      process.execPath,
      ["bin/agent-harness.js", ...argv],
      { env: { ...process.env, NO_COLOR: "1", ...env }, timeout: 240_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, output: `${stdout}\n${stderr}` }),
    ),
  );
}

/** Each of `runs` in turn in one warm runner started with `env`: what it answered to each. */
async function warm(runs: string[][], env: NodeJS.ProcessEnv): Promise<Ended[]> {
  const child = fork("suites/meta/warm-runner.mjs", [], { env: { ...process.env, NO_COLOR: "1", ...env }, stdio: "ignore" });
  const timer = setTimeout(() => child.kill("SIGKILL"), 240_000);
  try {
    await new Promise((resolve, reject) => {
      child.once("message", resolve);
      child.once("exit", reject);
    });
    const answers: Ended[] = [];
    for (const [id, argv] of runs.entries())
      answers.push(
        await new Promise<Ended>((resolve, reject) => {
          child.once("message", (m: { code: number; output: string }) => resolve({ code: m.code, output: m.output }));
          child.once("exit", (code) => reject(new Error(`the runner ended (code ${code}) with no answer`)));
          child.send({ id, argv });
        }),
      );
    return answers;
  } finally {
    clearTimeout(timer);
    child.kill("SIGKILL");
  }
}

/** What a run printed, less what differs from run to run (request ids, times, counts of probes, its folder). */
const stable = (output: string) =>
  output
    .split("\n")
    .filter((line) => line.trim() && !/reports: |service clock: /.test(line))
    .map((line) =>
      line
        .replace(/\d{4}-\d\d-\d\dT[\d-]+Z-[0-9a-f]+/g, "RUN")
        .replace(/req_[\w-]+/g, "req_")
        // a check's time is shown in ms or s as it came out: the same check may cross a second on a busy runner
        // (and a run's, which may cross a minute: "58 s" in one, "1 min 3 s" in the other)
        .replace(/\b(\d+ min )?\d+(\.\d+)? m?s\b/g, "TIME")
        .replace(/\b\d+ min\b/g, "TIME")
        .replace(/\d+([.:]\d+)*/g, "N"),
    )
    .join("\n");

describe("meta: the warm CLI answers as a process of its own", { concurrent: true }, () => {
  test.for(INTERNAL_FAULTS)("internal fault %s: the same exit code and lines", { timeout: 300_000 }, async (fault) => {
    const env = { AGENT_HARNESS_INTERNAL_FAULT: fault };
    const argv = ["verify", "--dry-run", "--workers", "1"];
    const [own, [inWarm]] = await Promise.all([cold(argvOf(argv), env), warm([argvOf(argv)], env)]);
    expect(inWarm!.code).toBe(own.code);
    expect(stable(inWarm!.output)).toBe(stable(own.output));
  });

  test(
    "a run with a finding, twice in one runner: the same exit code and findings as a process of its own",
    { timeout: 300_000 },
    async () => {
      const argv = [
        "verify",
        "--seed",
        "1",
        "--fault",
        "key-in-header",
        "--sections",
        "auth.no-key-echo",
        "--suites",
        "functional",
        "--workers",
        "1",
      ];
      const [own, answers] = await Promise.all([cold(argvOf(argv), {}), warm([argvOf(argv), argvOf(argv)], {})]);
      expect(own.code).toBe(1);
      for (const answer of answers) {
        expect(answer.code).toBe(1);
        expect(stable(answer.output)).toBe(stable(own.output));
      }
    },
  );
});
