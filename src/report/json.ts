import { type ExitCode, exitCodeOf, noVerdictLine, type RunResult, type RunSummary, summarize } from "./model.js";
import { type ReportOptions, reportableRun } from "./redact.js";

/** Bumped when a field of results.json changes meaning or goes away. */
// 2: summary.totals.failed counts the failed checks no finding explains; underFindings the rest
const RESULTS_JSON_VERSION = 2;

/** results.json: the run as recorded plus its summary, for machines (dashboards, trend lines, `jq`). */
export interface ResultsJson extends RunResult {
  reportVersion: typeof RESULTS_JSON_VERSION;
  /**
   * The exit code the run ended with: what a gate reads (`jq -e '.exitCode == 0'`). The totals
   * alone would mislead one: a failed check under a finding is not counted as failed, and a run
   * that ran nothing has no failure at all.
   */
  exitCode: ExitCode;
  /** why the run is no verdict on the service (exit 2: nothing ran, or inconclusive checks), when it is */
  noVerdict?: string;
  summary: RunSummary;
}

function resultsJson(runInput: RunResult, options: ReportOptions = {}): ResultsJson {
  const run = reportableRun(runInput, options);
  const noVerdict = noVerdictLine(run);
  return {
    reportVersion: RESULTS_JSON_VERSION,
    exitCode: exitCodeOf(run),
    ...(noVerdict ? { noVerdict } : {}),
    ...run,
    summary: summarize(run),
  };
}

export function renderJson(run: RunResult, options: ReportOptions = {}): string {
  return `${JSON.stringify(resultsJson(run, options), null, 2)}\n`;
}
