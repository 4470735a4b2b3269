import { escapeHtml } from "../../report/index.js";
import { CHART_STYLE, hdrChart } from "../charts.js";
import { OUTCOME_LABEL, OUTCOMES } from "../recorder.js";
import type { LoadRun } from "../run-of-scenarios.js";
import {
  compareLines,
  type compareVerdict,
  fewestAnswers,
  MIN_TAIL,
  type Regression,
  type ScenarioChange,
  type UnjudgedGate,
  unjudgedLine,
} from "./compare.js";

/**
 * The comparison as a page: the verdict, the gates that broke, the table, and per scenario,
 * endpoint and outcome the two runs' latency distributions overlaid on one HDR chart.
 */
export function renderCompareHtml(
  runs: { base: LoadRun; current: LoadRun; baseName: string; currentName: string },
  changes: readonly ScenarioChange[],
  judged: {
    broken: readonly Regression[];
    unjudged: readonly UnjudgedGate[];
    unfit: readonly { line: string }[];
    verdict: ReturnType<typeof compareVerdict>;
  },
): string {
  const { broken, unjudged, unfit, verdict } = judged;
  const charts = changes.map((s) => {
    const base = runs.base.scenarios.find((r) => r.id === s.scenario);
    const current = runs.current.scenarios.find((r) => r.id === s.scenario);
    const endpoints = Object.keys(base?.latency ?? {}).sort();
    const figures = endpoints.flatMap((ep) =>
      OUTCOMES.map((o) => {
        const [a, b] = [base?.latency[ep]?.[o], current?.latency[ep]?.[o]];
        if (!a || !b) return "";
        // the legend names the side only: the runs' names (long ids) head the page, and would run
        // past the chart's edge here
        return hdrChart(`${s.scenario} ${ep}: ${OUTCOME_LABEL[o]} answers, BASE and CURRENT`, [
          { name: "BASE", h: a, color: "#64748b", dashed: true },
          { name: "CURRENT", h: b, color: "#2563eb" },
        ]);
      }),
    );
    return `<div class="scenario"><h2>${escapeHtml(s.scenario)}</h2><div class="charts">${figures.join("")}</div></div>`;
  });
  const heading = `<p${verdict.code ? ' class="broken"' : ""}><strong>${escapeHtml(verdict.line)}</strong></p>`;
  const lines = [
    ...broken.map((r) => r.message),
    ...unfit.map((u) => `${u.line}: its figures are not compared as a release's (its own report says why)`),
    ...unjudged.map(unjudgedLine),
  ];
  const notes = lines.length ? `<ul>${lines.map((l) => `<li>${escapeHtml(l)}</li>`).join("")}</ul>` : "";
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>agent-harness load compare · ${escapeHtml(runs.baseName)} → ${escapeHtml(runs.currentName)}</title>
<style>body{font:14px system-ui,sans-serif;margin:24px;max-width:1700px}pre{background:#f8fafc;padding:8px;overflow:auto}.broken{color:#b91c1c}${CHART_STYLE}</style></head>
<body><main><h1>agent-harness load compare</h1>
<p>BASE ${escapeHtml(runs.baseName)} (${escapeHtml(runs.base.startedAt)}) → CURRENT ${escapeHtml(runs.currentName)} (${escapeHtml(runs.current.startedAt)}). A change is beyond noise when the 95% bootstrap interval of the quantile's change, resampled from both runs' recorded histograms, excludes zero; a quantile with fewer than ${MIN_TAIL} answers above it in either run (a p99 from under ${fewestAnswers(99)} answers) is shown, never judged.</p>
${heading}${notes}
<pre>${escapeHtml(compareLines(changes).join("\n"))}</pre>
<section id="load">${charts.join("\n")}</section>
</main></body></html>
`;
}
