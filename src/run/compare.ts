import { mkdirSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import {
  compareLines,
  compareRuns,
  compareVerdict,
  type Gate,
  notComparable,
  readLoadRun,
  regressions,
  unfitScenarios,
  unjudgedGates,
  unjudgedLine,
} from "../load/compare/compare.js";
import { renderCompareHtml } from "../load/compare/html.js";
import { SCENARIOS } from "../load/index.js";
import { newRunId } from "../report/index.js";
import { UsageError } from "./usage-error.js";

/**
 * `load compare BASE CURRENT`: both runs read, their comparability checked (exit 2 saying why
 * not), the table printed, compare.html and compare.json written; exit 1 when a gate broke
 * beyond its tolerance and the noise; else exit 2 when a latency gate could be judged on no
 * endpoint (too few answers for its quantile: a pass would be green for what was not judged) or
 * a scenario did not pass in one of the runs (its figures are no reference and no candidate);
 * else 0.
 */
export async function runCompare(
  paths: { base: string; current: string },
  gates: readonly Gate[],
  reportDir: string,
  seed: number,
) {
  const base = readLoadRun(paths.base);
  if (typeof base === "string") throw new UsageError(`load compare: BASE ${base}`);
  const current = readLoadRun(paths.current);
  if (typeof current === "string") throw new UsageError(`load compare: CURRENT ${current}`);
  const why = notComparable(base, current);
  if (why) throw new UsageError(`load compare: not comparable: ${why}`);
  const changes = compareRuns(base, current, seed);
  // latency gates judge the scenarios whose latencies hold no intended wait, as thresholds do
  const judged = new Set(SCENARIOS.filter((s) => s.latency.judged).map((s) => s.id));
  // a scenario that did not pass in one of the runs is no reference and no candidate: never judged
  const unfit = unfitScenarios(base, current);
  const fit = changes.filter((c) => !unfit.some((u) => u.scenario === c.scenario));
  const broken = regressions(fit, gates, judged);
  const unjudged = unjudgedGates(fit, gates, judged);
  const verdict = compareVerdict(broken, unjudged, unfit, gates.length);
  const out = process.stdout;
  out.write(`agent-harness load compare — BASE ${base.runId} → CURRENT ${current.runId}\n${compareLines(changes).join("\n")}\n`);
  for (const u of unjudged) out.write(`? ${unjudgedLine(u)}\n`);
  for (const u of unfit) out.write(`? ${u.line}: its figures are not compared as a release's (its own report says why)\n`);
  for (const r of broken) out.write(`✗ ${r.message}\n`);
  const dir = join(resolve(reportDir), `compare-${newRunId()}`);
  mkdirSync(dir, { recursive: true });
  const name = (path: string) =>
    basename(path === "load.json" || path.endsWith("/load.json") ? dirname(resolve(path)) : resolve(path));
  writeFileSync(
    join(dir, "compare.html"),
    renderCompareHtml({ base, current, baseName: name(paths.base), currentName: name(paths.current) }, changes, {
      broken,
      unjudged,
      unfit,
      verdict,
    }),
  );
  writeFileSync(
    join(dir, "compare.json"),
    `${JSON.stringify({ base: base.runId, current: current.runId, gates, changes, regressions: broken, unjudged, unfit, verdict }, null, 2)}\n`,
  );
  out.write(`${verdict.line}\nreport: ${dir} (compare.html, compare.json)\n`);
  return verdict.code;
}
