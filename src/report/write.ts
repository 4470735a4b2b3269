import { randomBytes } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { renderHtml } from "./html.js";
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
}

/** A run id that sorts by time and is safe as a directory name everywhere: `2025-01-31T09-05-07-123Z-3f9a1c`. */
export function newRunId(now: Date = new Date()): string {
  return `${now.toISOString().replace(/[:.]/g, "-")}-${randomBytes(3).toString("hex")}`;
}

const SAFE_RUN_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** Writes junit.xml, results.json and report.html into `dir/<runId>/` (created if needed), all from the same run. */
export async function writeReports(run: RunResult, dir: string, options: ReportOptions = {}): Promise<WrittenReports> {
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
  return paths;
}
