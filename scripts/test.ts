/**
 * `npm test` (CI's run) after the lint: every vitest project, as two vitest processes at once (vitest.config.ts,
 * AGENT_HARNESS_TEST_SIDE). The timed side runs at the normal CPU priority, its output live; the
 * untimed side at the lowest (nice 19: its workers and the CLI runs they start inherit it), its
 * output kept in reports/vitest-untimed.log and shown once the timed side has ended, so the two
 * logs never interleave. Each side writes its own JSON results and project times; they are joined
 * here into reports/vitest-results.json and reports/vitest-projects.json, which `.ci/run` reads.
 * The exit code is the first side's that failed.
 *
 *   npm test                  both sides
 *   npm test -- ARGS…         one plain `vitest run ARGS…` over every project (a file, -t, --project)
 *   npm run test:one          every project in one plain `vitest run`, one group after another
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { setPriority } from "node:os";
import { dirname, join } from "node:path";
import type { ProjectTime } from "./vitest-project-times.js";

/** vitest's own command (its package's bin), run by this node */
const VITEST = (() => {
  const manifest = createRequire(import.meta.url).resolve("vitest/package.json");
  const { bin } = JSON.parse(readFileSync(manifest, "utf8")) as { bin: { vitest: string } };
  return join(dirname(manifest), bin.vitest);
})();
const LOWEST_PRIORITY = 19;
const UNTIMED_LOG = "reports/vitest-untimed.log";
const SIDES = ["timed", "untimed"] as const;
type Side = (typeof SIDES)[number];

const args = process.argv.slice(2);
if (args.length) process.exit(await ended(vitest(args, undefined)));

mkdirSync("reports", { recursive: true });
for (const side of SIDES)
  for (const name of ["vitest-results", "vitest-projects"]) rmSync(`reports/${name}-${side}.json`, { force: true });

const untimedLog = createWriteStream(UNTIMED_LOG);
const untimed = vitest([], "untimed", untimedLog);
// before vitest forks its first worker (its start takes a few hundred ms): every process it starts
// inherits the priority
if (untimed.pid !== undefined) setPriority(untimed.pid, LOWEST_PRIORITY);
const timed = vitest([], "timed");
const children = [timed, untimed];
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.on(signal, () => {
    for (const child of children) child.kill(signal);
  });

// listened for from their start: a side that ends first has ended before the other is awaited
const [timedCode, untimedCode] = await Promise.all([ended(timed), ended(untimed)]);
await new Promise<void>((resolve) => untimedLog.end(resolve));
console.log(`\n==== the untimed side, run at the lowest CPU priority beside the above (${UNTIMED_LOG}) ====\n`);
process.stdout.write(readFileSync(UNTIMED_LOG, "utf8"));
joinReports();
process.exit(timedCode || untimedCode);

/** `vitest run` with `args`, on one side (or every project when `side` is undefined). */
function vitest(args: string[], side: Side | undefined, log?: NodeJS.WritableStream): ChildProcess {
  const child = spawn(process.execPath, [VITEST, "run", ...args], {
    env: side ? { ...process.env, AGENT_HARNESS_TEST_SIDE: side } : process.env,
    stdio: log ? ["ignore", "pipe", "pipe"] : "inherit",
  });
  if (log) {
    child.stdout?.pipe(log, { end: false });
    child.stderr?.pipe(log, { end: false });
  }
  return child;
}

/** The exit code a child ended with; one a signal ended is a failure too. */
function ended(child: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    child.once("error", (err) => {
      console.error(`npm test: vitest did not start: ${err.message}`);
      resolve(1);
    });
    child.once("close", (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

/** Each side's JSON results and project times, as one run's. */
function joinReports(): void {
  const read = <T>(file: string): T | undefined => (existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as T) : undefined);
  const results = SIDES.map((side) => read<Record<string, unknown>>(`reports/vitest-results-${side}.json`)).filter(
    (r) => r !== undefined,
  );
  if (results.length) {
    const joined: Record<string, unknown> = { ...results[0] };
    for (const key of Object.keys(joined))
      if (key.startsWith("num")) joined[key] = results.reduce((sum, r) => sum + Number(r[key] ?? 0), 0);
    joined.success = results.length === SIDES.length && results.every((r) => r.success === true);
    joined.startTime = Math.min(...results.map((r) => Number(r.startTime)));
    joined.testResults = results.flatMap((r) => (r.testResults as unknown[]) ?? []);
    writeFileSync("reports/vitest-results.json", JSON.stringify(joined));
  }
  const times = SIDES.flatMap((side) =>
    (read<ProjectTime[]>(`reports/vitest-projects-${side}.json`) ?? []).map((t) => ({
      ...t,
      ...(side === "untimed" ? { beside: true } : {}),
    })),
  );
  writeFileSync("reports/vitest-projects.json", `${JSON.stringify(times, null, 2)}\n`);
}
