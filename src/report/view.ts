import {
  describeOptions,
  exitCodeOf,
  inconclusiveLine,
  nothingRanLine,
  type RunResult,
  summarize,
  summaryLine,
  unexplainedChecks,
} from "./model.js";
import { type ReportOptions, reportableRun } from "./redact.js";
import { inconclusiveCause } from "./verdict.js";

/**
 * What a page for a person (report.html, the CI job summary) shows first, read from the run
 * as every report reads it, keys redacted: the totals, the exit code's verdict, the summary
 * line, the red checks no finding explains and the options.
 */
export function reportView(runInput: RunResult, options: ReportOptions, writerDrops?: (text: string) => string) {
  const run = reportableRun(runInput, options, writerDrops);
  const summary = summarize(run);
  return {
    run,
    summary,
    exitCode: exitCodeOf(run),
    /** why an exit 2 is no harness error but checks another client or the load's measurement kept from judging, when it is */
    inconclusive: inconclusiveLine(run),
    inconclusiveCause: inconclusiveCause(run.checks.filter((c) => c.status === "inconclusive").map((c) => c.message)),
    /** why an exit 2 is a run of no check at all (its selection, its keys, its bound), when it is */
    nothingRan: nothingRanLine(run),
    line: nothingRanLine(run) ?? summaryLine(summary.totals),
    // what no finding explains: harness errors, and failures of a run recorded without findings
    unexplained: unexplainedChecks(run),
    options: describeOptions(run.options),
  };
}
