import { defineConfig, type TestProjectInlineConfiguration } from "vitest/config";
import { ProjectTimes } from "./scripts/vitest-project-times.js";
import { startingFirst } from "./scripts/vitest-sequencer.js";
import { CHECK_TAGS } from "./src/plan/profiles.js";
import { EMBEDDED_DEFAULTS } from "./src/target/harness-target.js";

/** A project whose tests start the CLI as child processes runs it compiled (suites/meta/compiled-cli.ts). */
const compiledCli = (project: string) => ({
  globalSetup: ["suites/meta/compiled-cli.ts"],
  env: { AGENT_HARNESS_COMPILED: `.build/compiled-${project}` },
});

/**
 * Meta files whose verdicts do not ride on timing: arguments and their one-line errors, dry runs
 * and key checks, the warm runner against processes of their own, the exit-code promises (internal
 * faults, signals), secrets kept out of every output. Two at a time, in a project of their own
 * after every timing-bound project (91 s one after another in CI; measured two at a time: 64 s at
 * 1.9 busy cores, all passing).
 */
/**
 * The functional and property suites side by side, as `verify`'s default run has them: one pool of
 * the embedded default's workers, each project on a reference server of its own and each worker on
 * a key set of its own (measured: 45–55 s for the two against 28 + 46 s one after the other, the
 * property files then one at a time at 0.6 of a core; all passing in four runs)
 */
const SUITES_GROUP = { groupOrder: 1, maxWorkers: EMBEDDED_DEFAULTS.workers } as const;

/**
 * `npm test` (scripts/test.ts) runs the projects in two vitest processes at once. The timed side
 * (every project whose verdicts ride on timing, and the unit files) runs at the normal CPU
 * priority; the untimed side (the meta-cli files: arguments, dry runs, exit codes, secrets) at the
 * lowest (nice 19), its CLI runs included, on what the timed side leaves idle: the meta fault runs
 * mostly wait on rate windows and message budgets, about 1.4 of the two cores busy for ten
 * minutes. The kernel gives a normal process its core back the moment it wakes, so the timing
 * checks keep their cores (measured: the meta project 600 s, every row passing, beside the
 * meta-cli files, which ended in 194 s, all passing; one after the other they took 627 + 74 s in
 * one precheck, 692 + 91 s in another). AGENT_HARNESS_TEST_SIDE names the side a process runs;
 * unset, every project runs in it, one group after another (`npm run test:one`, and `npx vitest run`).
 */
const UNTIMED_PROJECTS: readonly string[] = ["meta-cli"];
const SIDE = process.env.AGENT_HARNESS_TEST_SIDE;
if (SIDE !== undefined && SIDE !== "timed" && SIDE !== "untimed")
  throw new Error(`AGENT_HARNESS_TEST_SIDE is "timed" or "untimed", not "${SIDE}"`);
const onThisSide = (projects: TestProjectInlineConfiguration[]) =>
  projects.filter((p) => {
    // every project here is named by a string (a name may also be an object of label and colour)
    const name = typeof p.test?.name === "string" ? p.test.name : p.test?.name?.label;
    return SIDE === undefined || (SIDE === "untimed") === UNTIMED_PROJECTS.includes(name ?? "");
  });
/** each side's reports apart (scripts/test.ts joins them into the plain names) */
const reportFile = (name: string) => `reports/${name}${SIDE ? `-${SIDE}` : ""}.json`;

/** The load, container and package projects: one pool, three files at a time (vitest requires one maxWorkers per group). */
const WAITING_GROUP = { groupOrder: 5, maxWorkers: 3 } as const;

const META_TWO_AT_ONCE = [
  "suites/meta/cli.test.ts",
  "suites/meta/key-check.test.ts",
  "suites/meta/warm-runner.test.ts",
  "suites/meta/invariants.test.ts",
  "suites/meta/secrets.test.ts",
];

export default defineConfig({
  test: {
    expect: { requireAssertions: true },
    tags: CHECK_TAGS,
    // the long files first in their groups, so none starts last and ends alone: the typecheck
    // (about 9 s of CPU, on two threads) among the unit files; the harness image's build (about 80 s) and the
    // long load scenarios (about 50 s) in the waiting group. The fault runs first among the meta
    // files: the untimed side of `npm test` runs beside them, and not beside the capacity file's
    // latency verdicts
    sequence: {
      sequencer: startingFirst([
        "src/lint/typecheck.test.ts",
        "suites/meta/faults.test.ts",
        "suites/container/harness-image.test.ts",
        "suites/load/long.test.ts",
      ]),
    },
    // the JSON results let .ci/run end with a plain "N passed, N failed" line, and the project
    // times with where the minutes went
    reporters: [
      "default",
      ["json", { outputFile: reportFile("vitest-results") }],
      new ProjectTimes(reportFile("vitest-projects")),
    ],
    projects: onThisSide([
      {
        extends: true,
        test: {
          name: "unit",
          include: ["src/**/*.test.ts"],
          // a test's own time on an idle machine is well under 20 s; three workers on two cores may
          // double it
          testTimeout: 40_000,
          sequence: { groupOrder: 0 },
          // the files of a worker share its modules: each file importing its own copy of the harness
          // (zod schemas, fastify, undici) was most of the project's time (measured: 166 s → 79 s).
          // No unit test mocks a module; the one that stubs an env var has it undone after each test
          isolate: false,
          unstubEnvs: true,
          // three workers on two cores (vitest's default leaves one core to itself): some files wait
          // on sockets and child processes (measured: one worker 96 s, two 61 s; in a slower hour two
          // 70.5 s at 1.75 busy cores, three 59 s at 1.92)
          maxWorkers: 3,
        },
      },
      {
        extends: true,
        test: {
          name: "functional",
          // the groups run one after another: the timing checks of one never compete with another's load
          sequence: { groupOrder: SUITES_GROUP.groupOrder },
          include: ["suites/functional/**/*.test.ts"],
          globalSetup: ["suites/support/global-setup.ts"],
          // files in parallel workers, each on a key set of its own (accounts, buckets, agents):
          // a worker claims one no other live worker holds (src/target/key-set-claim.ts) —
          // VITEST_POOL_ID repeats across the projects of one run (measured: 1, 2, 3, 4, 4)
          pool: "forks",
          maxWorkers: SUITES_GROUP.maxWorkers,
          isolate: false,
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          name: "property",
          // beside the functional suites, on a reference server of its own; seeded by AGENT_HARNESS_SEED
          sequence: { groupOrder: SUITES_GROUP.groupOrder },
          include: ["suites/property/**/*.test.ts"],
          globalSetup: ["suites/support/global-setup.ts"],
          pool: "forks",
          // each file on a key set of its own, as the functional files (its own property account)
          maxWorkers: SUITES_GROUP.maxWorkers,
          isolate: false,
          testTimeout: 300_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          name: "load",
          // bursts and 30 s streams measure timing: never beside the meta suite's fault runs. Beside
          // the container and package projects (projects of one groupOrder run at the same time, in
          // one pool of maxWorkers): docker builds and npm installs, far from the two cores' worth
          // of the unit tests; measured, the three 107 s at 1.6 busy cores against 138 s one group
          // after the other, all passing
          sequence: { groupOrder: WAITING_GROUP.groupOrder },
          include: ["suites/load/**/*.test.ts"],
          globalSetup: ["suites/support/global-setup.ts"],
          pool: "forks",
          // each worker on a key set of its own (as verify's default run takes the quick scenarios
          // beside the functional suites): the long file's 30 s streams beside the quick groups,
          // which mostly wait on windows (measured in CI one after another: 96 s at 0.37 of a core)
          maxWorkers: WAITING_GROUP.maxWorkers,
          isolate: false,
          testTimeout: 120_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          name: "meta",
          sequence: { groupOrder: 4 },
          ...compiledCli("meta"),
          include: ["suites/meta/**/*.test.ts"],
          exclude: META_TWO_AT_ONCE,
          // the five-seed repeat run and the fault runs each load both cores: one file at a time
          fileParallelism: false,
          // each fault is a verify run in a warm CLI (suites/meta/warm-runner.mjs), mostly waiting
          // on rate windows and message budgets rather than computing: several at a time even on
          // two cores. Four: at six, a fault run's own §7 timing checks came out inconclusive now
          // and then, warm CLIs or not (rate-limited-counted uncaught in a CI run, 2026-11-29),
          // and six saved 16 s of faults.test's 341. The property rows hold themselves to four too
          maxConcurrency: 4,
          testTimeout: 600_000,
        },
      },
      {
        extends: true,
        test: {
          name: "meta-cli",
          // the untimed side of `npm test` (above); in one process with every project, last: after the
          // network rows and the matrix, whose verdicts ride on timing
          sequence: { groupOrder: 8 },
          ...compiledCli("meta-cli"),
          include: META_TWO_AT_ONCE,
          maxWorkers: 2,
          testTimeout: 600_000,
          // a file's servers start at the lowest CPU priority beside the timed side: one took over
          // vitest's default 10 s in a precheck (key-check.test.ts's reference and proxy)
          hookTimeout: 120_000,
        },
      },
      {
        extends: true,
        test: {
          // npm pack, npm i into a temp folder, verify --profile smoke on each supported Node major
          name: "package",
          sequence: { groupOrder: WAITING_GROUP.groupOrder },
          maxWorkers: WAITING_GROUP.maxWorkers,
          include: ["suites/package/**/*.test.ts"],
          testTimeout: 180_000,
          hookTimeout: 420_000,
        },
      },
      {
        extends: true,
        test: {
          name: "network",
          // after the load suite, alone: each row is a verify run (two, direct and delayed) in a
          // child process whose timing checks the fault runs of meta or the bursts of load would starve
          sequence: { groupOrder: 6 },
          include: ["suites/network/**/*.test.ts"],
          ...compiledCli("network"),
          // three rows at a time (a row may be two verify runs): mostly waiting on delays and windows
          // (measured: 0.6 of a core for the file's 208 s at two at a time); the corporate-network
          // file beside them, its rows one after another: the far row alone sets the project's time
          // (129 s against network.test's other rows' 119 s and enterprise's 27 s in CI)
          maxWorkers: 2,
          maxConcurrency: 3,
          testTimeout: 600_000,
        },
      },
      {
        extends: true,
        test: {
          name: "matrix",
          // last and alone: each row is a dry run and a run of the harness in child processes, the
          // targets it starts included; three rows at a time, mostly waiting on windows. Beside the
          // network rows (one group, two workers) it saved 15–20 s but loaded the machine enough
          // that a network row's §7 tier flood outlasted its window (inconclusive, 1 of 3 prechecks)
          sequence: { groupOrder: 7 },
          include: ["suites/matrix/**/*.test.ts"],
          ...compiledCli("matrix"),
          maxConcurrency: 3,
          testTimeout: 400_000,
        },
      },
      {
        extends: true,
        test: {
          name: "container",
          sequence: { groupOrder: WAITING_GROUP.groupOrder },
          maxWorkers: WAITING_GROUP.maxWorkers,
          include: ["suites/container/**/*.test.ts"],
          testTimeout: 180_000,
          hookTimeout: 300_000,
        },
      },
    ]),
  },
});
