import { type RunResult, type RunSummary, summarize } from "./model.js";
import { type ReportOptions, reportableRun } from "./redact.js";

/** Bumped when a field of results.json changes meaning or goes away. */
// 2: summary.totals.failed counts the failed checks no finding explains; underFindings the rest
const RESULTS_JSON_VERSION = 2;

/** results.json: the run as recorded plus its summary, for machines (dashboards, trend lines, `jq`). */
export interface ResultsJson extends RunResult {
  reportVersion: typeof RESULTS_JSON_VERSION;
  summary: RunSummary;
}

function resultsJson(runInput: RunResult, options: ReportOptions = {}): ResultsJson {
  const run = reportableRun(runInput, options);
  return { reportVersion: RESULTS_JSON_VERSION, ...run, summary: summarize(run) };
}

export function renderJson(run: RunResult, options: ReportOptions = {}): string {
  return `${JSON.stringify(resultsJson(run, options), null, 2)}\n`;
}
