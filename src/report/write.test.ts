import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, test, vi } from "vitest";
import { SAMPLE_SECRETS, sampleRun } from "./test-support.js";
import { newRunId, writeReports } from "./write.js";

let dir: string | undefined;
afterEach(async () => {
  vi.unstubAllEnvs();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test("writes junit.xml, results.json and report.html into dir/<runId>/, none with a key", async () => {
  dir = await mkdtemp(join(tmpdir(), "reports-"));
  const run = sampleRun();
  const paths = await writeReports(run, dir, { secrets: [...SAMPLE_SECRETS], jobSummary: undefined });
  expect(paths).toEqual({
    dir: join(dir, run.runId),
    junit: join(dir, run.runId, "junit.xml"),
    json: join(dir, run.runId, "results.json"),
    html: join(dir, run.runId, "report.html"),
  });
  for (const path of [paths.junit, paths.json, paths.html]) {
    const text = await readFile(path, "utf8");
    expect(text.length).toBeGreaterThan(0);
    for (const secret of SAMPLE_SECRETS) expect(text).not.toContain(secret);
  }
  expect(JSON.parse(await readFile(paths.json, "utf8")).runId).toBe(run.runId);
});

test("appends the job summary to $GITHUB_STEP_SUMMARY, after what earlier steps wrote, without a key", async () => {
  dir = await mkdtemp(join(tmpdir(), "reports-"));
  const summary = join(dir, "step-summary.md");
  await writeFile(summary, "an earlier step\n");
  vi.stubEnv("GITHUB_STEP_SUMMARY", summary);
  const paths = await writeReports(sampleRun(), dir, { secrets: [...SAMPLE_SECRETS] });
  expect(paths.jobSummary).toBe(summary);
  const text = await readFile(summary, "utf8");
  expect(text).toMatch(/^an earlier step\n### agent-harness verify: /);
  expect(text).toContain(`Reports in \`${paths.dir}\``);
  for (const secret of SAMPLE_SECRETS) expect(text).not.toContain(secret);
});

test.for(["../escape", "a/b", "", ".hidden", "x".repeat(200)])("refuses the run id %j as a directory name", async (runId) => {
  await expect(writeReports(sampleRun({ runId }), tmpdir())).rejects.toThrow(/not a safe directory name/);
});

test("newRunId sorts by time and is filesystem-safe", () => {
  const id = newRunId(new Date("2025-01-31T09:05:07.123Z"));
  expect(id).toMatch(/^2025-01-31T09-05-07-123Z-[0-9a-f]{6}$/);
  expect(newRunId()).not.toBe(newRunId());
  expect(newRunId(new Date("2025-01-31T09:05:07.123Z")) < newRunId(new Date("2025-01-31T09:05:08.000Z"))).toBe(true);
});
