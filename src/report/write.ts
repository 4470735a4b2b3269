import { randomBytes } from "node:crypto";
import { appendFile, mkdir, writeFile } from "node:fs/promises";
import { isAbsolute, join, relative, resolve } from "node:path";
import { renderHtml } from "./html.js";
import { renderJobSummary } from "./job-summary.js";
import { renderJson } from "./json.js";
import { renderJunit } from "./junit.js";
import type { RunResult } from "./model.js";
import type { ReportOptions } from "./redact.js";

export interface WrittenReports {
  /** dir/<runId> */
  dir: string;
  junit: string;
  json: string;
  html: string;
  /** the file the job summary was appended to, when there was one */
  jobSummary?: string;
}

export interface WriteOptions extends ReportOptions {
  /**
   * a file to append the Markdown job summary to; default $GITHUB_STEP_SUMMARY, which GitHub
   * Actions sets for every step, so a run in a workflow shows its verdict on the job's page
   * with or without the action
   */
  jobSummary?: string | undefined;
}

/** A run id that sorts by time and is safe as a directory name everywhere: `2025-01-31T09-05-07-123Z-3f9a1c`. */
export function newRunId(now: Date = new Date()): string {
  return `${now.toISOString().replace(/[:.]/g, "-")}-${randomBytes(3).toString("hex")}`;
}

/** When the run whose id `text` starts with began (newRunId's time, ms since the epoch), if it starts with one. */
export function runIdStartedAt(text: string): number | undefined {
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})-(\d{3})Z/.exec(text);
  return m ? Date.parse(`${m[1]}T${m[2]}:${m[3]}:${m[4]}.${m[5]}Z`) : undefined;
}

const SAFE_RUN_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * Writes junit.xml, results.json and report.html into `dir/<runId>/` (created if needed), all from
 * the same run, and appends the job summary when a CI step asks for one.
 */
export async function writeReports(run: RunResult, dir: string, options: WriteOptions = {}): Promise<WrittenReports> {
  // The run id becomes a path segment: refuse anything that could climb out of `dir`.
  if (!SAFE_RUN_ID.test(run.runId) || run.runId.includes("..")) {
    throw new Error(`run id ${JSON.stringify(run.runId)} is not a safe directory name (use newRunId())`);
  }
  const runDir = resolve(dir, run.runId);
  await mkdir(runDir, { recursive: true });
  const paths: WrittenReports = {
    dir: runDir,
    junit: join(runDir, "junit.xml"),
    json: join(runDir, "results.json"),
    html: join(runDir, "report.html"),
  };
  await Promise.all([
    writeFile(paths.junit, renderJunit(run, options), "utf8"),
    writeFile(paths.json, renderJson(run, options), "utf8"),
    writeFile(paths.html, renderHtml(run, options), "utf8"),
  ]);
  const jobSummary = "jobSummary" in options ? options.jobSummary : process.env.GITHUB_STEP_SUMMARY;
  if (!jobSummary) return paths;
  // the folder as the job's log names it: relative to the working directory when inside it
  const shown = relative(process.cwd(), runDir);
  const reportDir = shown.startsWith("..") || isAbsolute(shown) ? runDir : shown;
  await appendFile(jobSummary, renderJobSummary(run, { ...options, reportDir }), "utf8");
  return { ...paths, jobSummary };
}
