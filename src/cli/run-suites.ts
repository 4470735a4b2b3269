import { fileURLToPath } from "node:url";
import type { TestCase, TestModule } from "vitest/node";
import { CLAUSE_BY_ID } from "../contract/index.js";
import { CHECK_TAGS, type Profile } from "../plan/profiles.js";
import type { CheckResult } from "../report/index.js";
import type { HarnessTarget } from "../target/harness-target.js";
import type { SuiteName } from "./config.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** The test files of each suite the CLI can run. */
export const SUITE_GLOBS: Record<SuiteName, string[]> = {
  functional: ["suites/functional/**/*.test.ts"],
  property: ["suites/property/**/*.test.ts"],
  load: ["suites/load/**/*.test.ts"],
};

function toCheck(test: TestCase, suite: string): CheckResult {
  const meta = test.meta();
  const result = test.result();
  const clauseIds = meta.clauseIds ?? [];
  const sections = [...new Set(clauseIds.map((id) => CLAUSE_BY_ID.get(id)?.section ?? "?"))];
  const status =
    result.state === "passed" ? "passed" : result.state === "failed" ? (meta.harnessError ? "error" : "failed") : "skipped";
  const message =
    result.state === "failed"
      ? result.errors.map((e) => e.message + (e.diff ? `\n${e.diff}` : "")).join("\n")
      : result.state === "skipped"
        ? (result.note ?? "skipped")
        : undefined;
  return {
    id: test.fullName,
    title: test.name,
    suite,
    file: test.module.relativeModuleId,
    clauseIds,
    sections,
    status,
    durationMs: Math.round(test.diagnostic()?.duration ?? 0),
    ...(message ? { message } : {}),
    ...(meta.evidence?.length ? { evidence: meta.evidence } : {}),
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
  onCheck?: (check: CheckResult) => void;
  /** set when the run should stop early (Ctrl-C) */
  signal?: AbortSignal;
}

/** Run the suites in vitest against the target and return one CheckResult per test. */
export async function runSuites(options: SuiteRunOptions): Promise<CheckResult[]> {
  const { createVitest } = await import("vitest/node");
  const checks: CheckResult[] = [];
  const suiteOf = (file: string) =>
    (Object.keys(SUITE_GLOBS) as SuiteName[]).find((s) => file.startsWith(`suites/${s}/`)) ?? "suites";
  const pattern = options.sections?.length ? sectionPattern(options.sections) : undefined;
  const reporter = {
    onTestCaseResult(test: TestCase) {
      // a check left out by --sections is not part of this run (unlike one skipped by --bail)
      if (pattern && !pattern.test(test.fullName)) return;
      if (options.profile === "smoke" && !test.tags.includes("smoke")) return;
      const check = toCheck(test, suiteOf(test.module.relativeModuleId));
      checks.push(check);
      options.onCheck?.(check);
    },
    onTestModuleEnd(module: TestModule) {
      for (const check of moduleErrors(module, suiteOf(module.relativeModuleId))) {
        checks.push(check);
        options.onCheck?.(check);
      }
    },
  };
  // vitest exits the process on SIGINT/SIGTERM; this run must outlive the signal to delete
  // what it created (issue §5), so it takes the signals back from vitest and cancels the run itself
  const held = { SIGINT: new Set(process.listeners("SIGINT")), SIGTERM: new Set(process.listeners("SIGTERM")) };
  const vitest = await createVitest(
    "test",
    {
      config: false,
      root: ROOT,
      watch: false,
      reporters: [reporter],
      include: options.suites.flatMap((s) => SUITE_GLOBS[s]),
      ...(pattern ? { testNamePattern: pattern } : {}),
      ...(options.bail ? { bail: 1 } : {}),
      tags: CHECK_TAGS,
      ...(options.profile === "smoke" ? { tagsFilter: ["smoke"] } : {}),
      provide: { target: options.target },
      // a target the harness started has a key set (accounts, buckets) per worker: files run in
      // parallel; any other target's buckets are shared, so its checks take turns in one worker
      pool: "forks",
      fileParallelism: workersFor(options.target) > 1,
      maxWorkers: workersFor(options.target),
      isolate: false,
      testTimeout: timeoutFor(options.target),
      hookTimeout: timeoutFor(options.target),
      expect: { requireAssertions: true },
      passWithNoTests: false,
    },
    { logLevel: "silent" },
  );
  for (const signal of ["SIGINT", "SIGTERM"] as const)
    for (const listener of process.listeners(signal)) if (!held[signal].has(listener)) process.off(signal, listener);
  const cancel = () => void vitest.cancelCurrentRun("keyboard-input");
  options.signal?.addEventListener("abort", cancel, { once: true });
  try {
    if (!options.signal?.aborted) await vitest.start();
  } finally {
    options.signal?.removeEventListener("abort", cancel);
    await vitest.close();
  }
  return checks;
}

/** Check titles start with the sections they cite (`§5 §7 …`): match any of `sections` there. */
export function sectionPattern(sections: readonly string[]): RegExp {
  return new RegExp(`(?:^|\\s)(?:${sections.join("|")})(?=\\s)`);
}

/** One worker per key set of the target. */
export function workersFor(target: HarnessTarget): number {
  return Math.max(1, target.keyPool?.length ?? 1);
}

/** A check may wait out a full window twice and a message budget: give it that, with slack. */
export function timeoutFor(target: HarnessTarget): number {
  return Math.ceil((3 * target.windowSeconds + 2 * target.messageTimeoutSeconds + 30) * 1000);
}

export { CLAUSE_BY_ID };
