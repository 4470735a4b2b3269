import { createHash } from "node:crypto";
import { existsSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type { createVitest, Reporter, TestCase, TestModule, TestSequencer, TestSpecification } from "vitest/node";
import { CLAUSE_BY_ID, RATE_LIMITS } from "../contract/index.js";
import { type Lane, laneFileOrder, laneOfNeeds, lanesOf, laneTarget } from "../plan/lanes.js";
import { CHECK_TAGS, type Profile } from "../plan/profiles.js";
import {
  type CheckResult,
  type CollectedCheck,
  classify,
  collectFindings,
  type Finding,
  inClauseWords,
} from "../report/index.js";
import type { HarnessTarget } from "../target/harness-target.js";
import { releaseClaims } from "../target/key-set-claim.js";
import { cancelOnce } from "./cancel-once.js";
import { nativeSource } from "./compiled-source.js";
import { NOT_RUN_AFTER_BAIL, NOT_RUN_AFTER_STOP, type PlannedCheck, STOPPED_BY_BAIL, STOPPED_BY_STOP } from "./completeness.js";
import { SUITE_NAMES, type SuiteName } from "./config.js";
import { FileTimes } from "./file-times.js";
import { PACKAGE_ROOT } from "./package-root.js";
import { SectionIndex } from "./section-index.js";
import { SUITE_FILE_NEEDS } from "./suite-needs.generated.js";
import { needsOfFile } from "./suite-needs.js";

/**
 * Where the suites are: beside this module's tree when it has them (dist/ in the installed package,
 * whose layout scripts/build-package.mjs keeps; a tree the meta tests compile), else the checkout's
 * TypeScript, as for a checkout's CLI, compiled without the suites (scripts/checkout-tree.mjs) so a
 * report names the files a developer edits.
 */
const HERE = fileURLToPath(new URL("../../", import.meta.url));
const ROOT = existsSync(join(HERE, "suites")) ? HERE : `${PACKAGE_ROOT}${sep}`;

/**
 * The harness's own modules, which the suites' workers load with node's own loader when this CLI
 * runs compiled JavaScript: `src/` beside this module's tree (the installed package's, or a
 * checkout's compiled copy, to which the suites' imports of the TypeScript sources are sent);
 * through tsx, vite transforms them (src/run/compiled-source.ts).
 */
const NATIVE_SOURCE = nativeSource(join(ROOT, "src"), join(HERE, "src"), import.meta.url.endsWith(".js"));

/** This copy of the harness, in the name of the folder its vitest caches go to (runVitest). */
const CACHE_KEY = createHash("sha256").update(ROOT).digest("hex").slice(0, 8);

/** The test files of each suite the CLI can run: a folder under suites/ and how their names start. */
const SUITE_FILES: Record<SuiteName, { folder: string; startsWith: string }> = {
  functional: { folder: "functional", startsWith: "" },
  property: { folder: "property", startsWith: "" },
  load: { folder: "load", startsWith: "" },
  "quick-load": { folder: "load", startsWith: "quick-" },
};

/** Whether a test file (as vitest names it from the root) is one of a suite's. */
export function fileInSuite(suite: SuiteName, file: string): boolean {
  const { folder, startsWith } = SUITE_FILES[suite];
  return file.includes(`suites/${folder}/`) && file.slice(file.lastIndexOf("/") + 1).startsWith(startsWith);
}

/** A suite's files as vitest globs: TypeScript in a checkout, compiled JavaScript when installed. */
const suiteGlob = (suite: SuiteName) => {
  const { folder, startsWith } = SUITE_FILES[suite];
  return `suites/${folder}/**/${startsWith}*.test.{ts,js}`;
};

/** The declared files of the suites selected. */
function declaredFiles(suites: readonly SuiteName[]): string[] {
  return Object.keys(SUITE_FILE_NEEDS).filter((path) =>
    suites.some((suite) => {
      const { folder, startsWith } = SUITE_FILES[suite];
      return path.startsWith(`suites/${folder}/`) && path.slice(path.lastIndexOf("/") + 1).startsWith(startsWith);
    }),
  );
}

/**
 * vitest's note on the tests that were running when a run was cancelled (by --bail's first failure,
 * or by the run's own stop): @vitest/runner's TestRunAbortError. Pinned by a unit test, so that an
 * upgrade that rewords it fails there rather than leaving its words in a report.
 */
export const VITEST_CANCEL_NOTE = "The test run was aborted by the user.";
/** What a check the run's cancel reached says: stopped by --bail or by the run's stop, before it started or while it ran. */
const stoppedBecause = (bailed: boolean, started: boolean) =>
  bailed ? (started ? STOPPED_BY_BAIL : NOT_RUN_AFTER_BAIL) : started ? STOPPED_BY_STOP : NOT_RUN_AFTER_STOP;

const cancelled = (test: TestCase) => {
  const result = test.result();
  return result.state === "skipped" && result.note === VITEST_CANCEL_NOTE;
};

function toCheck(test: TestCase, suite: string): CheckResult {
  const meta = test.meta();
  const result = test.result();
  const clauseIds = meta.clauseIds ?? [];
  const sections = [...new Set(clauseIds.map((id) => CLAUSE_BY_ID.get(id)?.section ?? "?"))];
  const verdict = result.state === "failed" ? (meta.verdict ?? classify(result.errors)) : undefined;
  // the clause a failure named: its finding is made under it (one of the check's own, or a narrower one)
  const clauseAtFault = verdict?.clauseAtFault;
  const status = result.state === "passed" ? "passed" : (verdict?.status ?? "skipped");
  // the headline is the first line (the clause's words); a matcher's diff goes below it, with the evidence
  const message =
    result.state === "failed"
      ? result.errors.map((e) => inClauseWords(e, clauseIds) + (e.diff ? `\n${e.diff}` : "")).join("\n")
      : result.state === "skipped"
        ? (result.note ?? "skipped")
        : undefined;
  return {
    id: test.fullName,
    title: test.name,
    suite,
    file: test.module.relativeModuleId,
    // where the test is defined (includeTaskLocation below): JUnit annotations point at that line
    ...(test.location ? { line: test.location.line } : {}),
    clauseIds,
    sections,
    status,
    durationMs: Math.round(test.diagnostic()?.duration ?? 0),
    ...(message ? { message } : {}),
    ...(meta.evidence?.length ? { evidence: meta.evidence } : {}),
    ...(clauseAtFault ? { clauseAtFault } : {}),
    ...(meta.note ? { note: meta.note } : {}),
  };
}

/** A file that could not run at all (import error, failing beforeAll) is one harness error. */
function moduleErrors(module: TestModule, suite: string): CheckResult[] {
  return module.errors().map((e, i) => ({
    id: `${module.relativeModuleId}#error${i}`,
    title: `${module.relativeModuleId} could not run`,
    suite,
    file: module.relativeModuleId,
    clauseIds: [],
    sections: [],
    status: "error" as const,
    durationMs: 0,
    message: e.message,
  }));
}

export interface SuiteRunOptions {
  target: HarnessTarget;
  suites: readonly SuiteName[];
  /** only checks citing one of these PROFILE sections (their titles start with the sections) */
  sections?: readonly string[];
  /** stop at the first failed check */
  bail?: boolean;
  /** smoke: only the checks tagged smoke */
  profile?: Profile;
  /** `total`: the checks counted so far; `more`: files the run has yet to collect (their checks are not counted yet) */
  onCheck?: (check: CheckResult, at: { done: number; total: number; more: boolean }) => void;
  /** set when the run should stop early (Ctrl-C) */
  signal?: AbortSignal;
}

export interface SuitesRun {
  checks: CheckResult[];
  /** one defect, one finding: made from every test's observations once the run is over */
  findings: Finding[];
  /** the checks the run meant to run, as far as it collected them (see `filesNotReached`) */
  total: number;
  /** those checks, as vitest collected them: each is reported, run or skipped, unless the run was stopped */
  planned: PlannedCheck[];
  /** test files the run selected and never collected (stopped before them): their checks are not in `total` */
  filesNotReached: number;
}

/** What a run gathers from its vitest runs, lane by lane. */
interface Tally {
  checks: CheckResult[];
  collected: CollectedCheck[];
  planned: PlannedCheck[];
  total: number;
  /** the test files selected, and of those, the ones collected (their checks are in `planned`) */
  files: Set<string>;
  collectedFiles: Set<string>;
  /** which sections each file's checks cite, kept for the next run with --sections */
  index: SectionIndex;
  /** how long each file took, kept for the next run's order (runs whose order is free: see FileTimes) */
  times: FileTimes | undefined;
}

/** Files the run selected that it has not collected yet: their checks are not counted so far. */
const filesLeft = (tally: Tally) => [...tally.files].filter((f) => !tally.collectedFiles.has(f));

const withoutExtension = (file: string) => file.replace(/\.(ts|js)$/, "");

const suiteOf = (file: string) => SUITE_NAMES.find((s) => file.startsWith(`suites/${s}/`)) ?? "suites";

/** The reporter every lane's vitest reports to: one CheckResult per test in the run, with its observations. */
function tallyReporter(options: SuiteRunOptions, inRun: (test: TestCase) => boolean, tally: Tally): Reporter {
  const add = (check: CheckResult, observations: CollectedCheck["observations"]) => {
    tally.checks.push(check);
    tally.collected.push({ check, observations });
    options.onCheck?.(check, { done: tally.checks.length, total: tally.total, more: filesLeft(tally).length > 0 });
  };
  /** when each check started (ms since the epoch): one the run's cancel stopped has no time of vitest's */
  const began = new Map<string, number>();
  return {
    // a file's checks are counted as vitest collects it, before any of them runs
    onTestModuleCollected(module: TestModule) {
      tally.collectedFiles.add(module.relativeModuleId);
      const all = [...module.children.allTests()];
      if (!module.errors().length)
        tally.index.record(
          withoutExtension(module.relativeModuleId),
          all.flatMap((t) => t.tags),
        );
      const tests = all.filter(inRun);
      tally.total += tests.length;
      for (const test of tests)
        tally.planned.push({
          id: test.fullName,
          title: test.name,
          suite: suiteOf(module.relativeModuleId),
          file: module.relativeModuleId,
        });
    },
    onTestCaseReady(test: TestCase) {
      // vitest readies the checks a cancel marked skipped too: only one still to run has begun
      if (test.result().state === "pending") began.set(test.id, Date.now());
    },
    onTestCaseResult(test: TestCase) {
      if (!inRun(test)) return;
      const check = toCheck(test, suiteOf(test.module.relativeModuleId));
      // a check the run's cancel (--bail's first failure, or the run's own stop) reached is skipped:
      // vitest's state still pending, or marked skipped with vitest's words for a cancel ("aborted
      // by the user"), which a reader of a --bail run would take as theirs. Say which, whether it
      // had started, and for how long it ran (vitest keeps no time for it)
      if (test.result().state === "pending" || cancelled(test)) {
        const since = began.get(test.id);
        if (since !== undefined) check.durationMs = Date.now() - since;
        check.message = stoppedBecause(options.bail === true && !options.signal?.aborted, since !== undefined);
      }
      add(check, test.meta().observations ?? []);
    },
    onTestModuleEnd(module: TestModule) {
      // a file that could not even be collected (an import error) is reported here, as an error
      tally.collectedFiles.add(module.relativeModuleId);
      // a file's time counts for the next run's order only when it ran to its end
      if (!options.signal?.aborted && module.state() !== "skipped" && !module.errors().length)
        tally.times?.record(withoutExtension(module.relativeModuleId), module.diagnostic().duration);
      for (const check of moduleErrors(module, suiteOf(module.relativeModuleId))) add(check, []);
    },
  };
}

/**
 * A deployment's run spends its accounts' tiers side by side: one vitest per lane
 * (src/plan/lanes.ts), each file in the lane its declared needs and the keys given allow; any
 * other target runs as one.
 */
function lanesOfRun(target: HarnessTarget, files: readonly string[]) {
  const laneNames = lanesOf(target, files.map(needsOfFile));
  const lanes: { target: HarnessTarget; lane?: Lane }[] = laneNames?.length
    ? laneNames.map((lane) => ({ target: laneTarget(target, lane, laneNames), lane }))
    : [{ target }];
  return { laneNames, lanes };
}

/** Run the suites in vitest against the target: one CheckResult per test, and the findings. */
export async function runSuites(options: SuiteRunOptions): Promise<SuitesRun> {
  const sections = options.sections?.length ? options.sections : undefined;
  // every run keeps the index (a few ms), so even the first run with --sections after it can use it
  const index = SectionIndex.open(ROOT, cacheDir());
  // files known to have no check in the sections asked for are not even imported; a lane with no file does not start
  const idle = sections ? index.without(sections, declaredFiles(options.suites)) : [];
  const files = declaredFiles(options.suites).filter((f) => !idle.includes(f));
  const { laneNames, lanes } = lanesOfRun(options.target, files);
  // short: under the longest a bucket takes to refill (PROFILE §7: a Reset at most W + 1 s away)
  const shortMs = (options.target.windowSeconds + RATE_LIMITS.resetSlackSeconds) * 1000;
  const times = orderIsFree(options, laneNames) ? FileTimes.open(cacheDir(), timesKind(options), shortMs) : undefined;
  const tally: Tally = {
    checks: [],
    collected: [],
    planned: [],
    total: 0,
    files: new Set(),
    collectedFiles: new Set(),
    index,
    times,
  };
  // a check left out by --sections or the profile is not part of this run (unlike one skipped by --bail);
  // vitest selects the same checks by their tags (vitestConfig)
  const inRun = (test: TestCase) =>
    (!sections || sections.some((s) => test.tags.includes(s))) && (options.profile !== "smoke" || test.tags.includes("smoke"));
  const reporter = tallyReporter(options, inRun, tally);
  const include = [...new Set(options.suites.map(suiteGlob))];
  // the main lane's last files wait for the quota lane's end: say when it came, whatever ended it
  const handOff = lanes.find((l) => l.target.afterQuotaLane)?.target.afterQuotaLane;
  if (handOff) rmSync(handOff, { force: true });
  const selectedFiles = (files: readonly string[]) => {
    for (const file of files) tally.files.add(file);
  };
  // vitest exits the process on SIGINT/SIGTERM; this run must outlive the signal to delete
  // what it created, so it takes the signals back from vitest and cancels the run itself
  const held: HeldListeners = {
    SIGINT: new Set(process.listeners("SIGINT")),
    SIGTERM: new Set(process.listeners("SIGTERM")),
    unhandledRejection: new Set(process.listeners("unhandledRejection")),
  };
  // a lane that breaks stops the others: none may run on (and set the process's exit code) after the run has ended
  const laneBroke = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, laneBroke.signal]) : laneBroke.signal;
  try {
    const ends = await Promise.allSettled(
      lanes.map(async ({ target, lane }) => {
        try {
          const run = { inRun, selectedFiles, held, lane, times };
          await runVitest({ ...options, target, signal }, laneFiles(include, files, idle, lane, laneNames), reporter, run);
        } catch (err) {
          laneBroke.abort();
          throw err;
        } finally {
          // vitest has ended its workers here: no claim is held any more
          releaseClaims(target);
          if (lane === "quota" && handOff) writeFileSync(handOff, String(Date.now()));
        }
      }),
    );
    const broken = ends.find((end) => end.status === "rejected");
    if (broken) throw broken.reason;
  } finally {
    if (handOff) rmSync(handOff, { force: true });
    index.save();
    times?.save();
  }
  // a file selected and never collected, with the run not stopped, is a check unaccounted for: the
  // completeness rule (src/run/completeness.ts) reports it (skipped after --bail, else a harness error)
  // (a file known to have no check in the sections asked for would have added none)
  const notReached = filesLeft(tally).filter((f) => !sections || !index.without(sections, [withoutExtension(f)]).length);
  for (const file of notReached)
    tally.planned.push({ id: `${file} (not collected)`, title: `every check of ${file}`, suite: suiteOf(file), file });
  return { ...collectFindings(tally.collected), total: tally.total, planned: tally.planned, filesNotReached: notReached.length };
}

/**
 * The files of a lane among those `include` names (`declared`, by their declarations): the other
 * and quota lanes' own; the main lane all but those, so a file that declared nothing runs there,
 * with every key.
 */
function laneFiles(
  include: string[],
  declared: readonly string[],
  idle: readonly string[],
  lane: Lane | undefined,
  lanes: readonly Lane[] | undefined,
): { include: string[]; exclude?: string[] } {
  const globs = (files: readonly string[]) => files.map((f) => `${f}.{ts,js}`);
  const defaults = ["**/node_modules/**", "**/.git/**"];
  if (lane === undefined || lanes === undefined)
    return { include, ...(idle.length ? { exclude: [...defaults, ...globs(idle)] } : {}) };
  const laneOf = (file: string) => laneOfNeeds(needsOfFile(file), lanes);
  if (lane === "main")
    return { include, exclude: [...defaults, ...globs(idle), ...globs(declared.filter((f) => laneOf(f) !== "main"))] };
  return { include: globs(declared.filter((f) => laneOf(f) === lane)) };
}

/** The order of a lane's files: vitest's sequencer interface. */
class LaneOrder implements TestSequencer {
  private readonly order = laneFileOrder(needsOfFile);
  shard(files: TestSpecification[]): TestSpecification[] {
    return files;
  }
  sort(files: TestSpecification[]): TestSpecification[] {
    return [...files].sort((a, b) => this.order(a.moduleId, b.moduleId));
  }
}

const sizeOf = (file: string) => {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
};

/**
 * Whether the files' order can change nothing but the run's time: several workers, no account
 * lanes (a lane's files keep a fixed order, src/plan/lanes.ts), no --bail (the order would decide
 * which checks run before the stop).
 */
const orderIsFree = (options: SuiteRunOptions, laneNames: readonly Lane[] | undefined) =>
  !laneNames?.length && !options.bail && workersFor(options.target) > 1;

/** A file takes its own time under each target, window and selection (the sections in one order). */
const timesKind = (options: SuiteRunOptions) => {
  const selection = [...(options.sections ?? [])].sort().join(",") + (options.profile === "smoke" ? " smoke" : "");
  return `${options.target.kind}, W = ${options.target.windowSeconds} s, ${selection || "all"}`;
};

/** A run without lanes starts its longest files first (src/run/file-times.ts): vitest's sequencer interface. */
const longestFirst = (times: FileTimes) =>
  class LongestFirst implements TestSequencer {
    private readonly order = times.order();
    shard(files: TestSpecification[]): TestSpecification[] {
      return files;
    }
    sort(files: TestSpecification[]): TestSpecification[] {
      const key = (spec: TestSpecification) =>
        [withoutExtension(relative(ROOT, spec.moduleId).split(sep).join("/")), sizeOf(spec.moduleId)] as const;
      const keyed = files.map((spec) => ({ spec, key: key(spec) }));
      return keyed.sort((a, b) => this.order(a.key, b.key)).map((k) => k.spec);
    }
  };

/** The listeners before any vitest: the run takes the signals and unhandled rejections back from each. */
type HeldListeners = Record<"SIGINT" | "SIGTERM", Set<NodeJS.SignalsListener>> & {
  unhandledRejection: Set<NodeJS.UnhandledRejectionListener>;
};

/** How one vitest run of some of the suites' files goes. */
interface LaneRun {
  inRun: (test: TestCase) => boolean;
  /** the test files this vitest will run (relative to the root), as soon as it knows them */
  selectedFiles: (files: readonly string[]) => void;
  /** the account lane these files are (src/plan/lanes.ts), if the run has lanes */
  lane: Lane | undefined;
  /** the files' last times, for the order of a run whose order is free (orderIsFree) */
  times: FileTimes | undefined;
  held: HeldListeners;
}

/**
 * vite's cache would go to node_modules/.vite under ROOT, which an installed package (a global
 * install, the harness image's user) may not be able to write: one folder per user instead (by
 * uid: a container's user may have no passwd entry) and per installed copy (vitest empties its
 * module cache when it finds another lockfile there, under a run of another copy reading it)
 */
const cacheDir = () => join(tmpdir(), `agent-harness-vite-${process.getuid?.() ?? "user"}-${CACHE_KEY}`);

/** vitest's configuration for one run of some of the suites' files. */
function vitestConfig(
  options: SuiteRunOptions,
  files: { include: string[]; exclude?: string[] },
  reporter: Reporter,
  run: LaneRun,
) {
  return {
    config: false,
    root: ROOT,
    watch: false,
    reporters: [reporter],
    ...files,
    // a lane runs its files one after another in a fixed order (src/plan/lanes.ts); a run whose
    // order is free starts its longest files first; any other keeps vitest's order
    ...(run.lane
      ? { sequence: { sequencer: LaneOrder } }
      : run.times
        ? { sequence: { sequencer: longestFirst(run.times) } }
        : {}),
    ...(options.bail ? { bail: 1 } : {}),
    tags: CHECK_TAGS,
    // every expression must hold: the profile's tag, and any one of the sections and clauses asked for
    ...(tagsFilter(options).length ? { tagsFilter: tagsFilter(options) } : {}),
    // the tests leave response-level violations to this reporter, which makes findings of them
    provide: { target: options.target, findingsCollected: true },
    // a target the harness started has a key set (accounts, buckets) per worker: files run in
    // parallel; any other target's buckets are shared, so its checks take turns in one worker.
    // Forks, not threads: a worker claims its key set per process (src/target/key-set-claim.ts),
    // so threads of one process would share accounts (tried: findings against the reference)
    pool: "forks",
    fileParallelism: workersFor(options.target) > 1,
    maxWorkers: workersFor(options.target),
    isolate: false,
    server: { deps: { external: NATIVE_SOURCE.external } },
    testTimeout: timeoutFor(options.target),
    hookTimeout: timeoutFor(options.target),
    expect: { requireAssertions: true },
    // each test's line in its file, read from a stack as it is collected: the reports name it
    includeTaskLocation: true,
    passWithNoTests: false,
    // no results cache: vitest writes it whole at a run's end and reads it unguarded at the next
    // start, so runs (and a run's lanes) at once could read one half written; and it would order
    // a lane's files by the last run's times, so the calibration and the run could differ in order
    // (a run whose order is free is ordered by times of its own: src/run/file-times.ts)
    cache: false,
    // the suites' modules as transformed, kept between runs (keyed by their content): a run
    // starts about a second sooner (measured: 4.95 → 4.0 s for one section's checks)
    experimental: { fsModuleCache: true, fsModuleCachePath: join(cacheDir(), "modules") },
  } satisfies Parameters<typeof createVitest>[1];
}

/**
 * vitest's own handlers would end the process (exit 1 on an unhandled rejection, 128 + n on a
 * signal) before the run has deleted what it made: the CLI's handlers decide (src/cli/main.ts)
 */
function takeSignalsBack(held: HeldListeners): void {
  for (const signal of ["SIGINT", "SIGTERM"] as const)
    for (const listener of process.listeners(signal)) if (!held[signal].has(listener)) process.off(signal, listener);
  for (const listener of process.listeners("unhandledRejection"))
    if (!held.unhandledRejection.has(listener)) process.off("unhandledRejection", listener);
}

/**
 * One vitest run of some of the suites' files. Its checks are counted as vitest collects each file
 * (the tally reporter), not by collecting every file first in a vitest of its own: that pass cost
 * about 2 s of CPU a run, a third of a one-section run's (docs/figures.md).
 */
async function runVitest(
  options: SuiteRunOptions,
  files: { include: string[]; exclude?: string[] },
  reporter: Reporter,
  run: LaneRun,
): Promise<void> {
  if (!files.include.length || options.signal?.aborted) return;
  const { createVitest } = await import("vitest/node");
  const vitest = await createVitest("test", vitestConfig(options, files, reporter, run), {
    logLevel: "silent",
    cacheDir: cacheDir(),
    plugins: NATIVE_SOURCE.plugins,
  });
  takeSignalsBack(run.held);
  // two files failing at once under --bail must not become vitest's forced cancel, which loses both
  cancelOnce(vitest);
  const cancel = () => void vitest.cancelCurrentRun("keyboard-input");
  options.signal?.addEventListener("abort", cancel, { once: true });
  try {
    const specifications = await vitest.globTestSpecifications();
    // a lane (or a selection) whose globs match no file runs nothing: vitest would throw "No test files found"
    if (!specifications.length) return;
    run.selectedFiles(specifications.map((s) => relative(ROOT, s.moduleId).split(sep).join("/")));
    if (!options.signal?.aborted) await vitest.start();
  } finally {
    options.signal?.removeEventListener("abort", cancel);
    await vitest.close();
  }
}

/**
 * vitest's tag expressions for a run: `smoke` under --profile smoke, and any of the sections and
 * clause ids of --sections (each check is tagged with both: suites/support/harness.ts `check`).
 */
function tagsFilter(options: SuiteRunOptions): string[] {
  return [
    ...(options.profile === "smoke" ? ["smoke"] : []),
    ...(options.sections?.length ? [options.sections.join(" or ")] : []),
  ];
}

/** One worker per key set of the target. */
function workersFor(target: HarnessTarget): number {
  return Math.max(1, target.keyPool?.length ?? 1);
}

/** A check may wait out a full window twice and a message budget: give it that, with slack. */
function timeoutFor(target: HarnessTarget): number {
  return Math.ceil((3 * target.windowSeconds + 2 * target.messageTimeoutSeconds + 30) * 1000);
}
