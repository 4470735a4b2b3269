import { expect, test } from "vitest";
import { renderJson } from "./json.js";
import { summarize } from "./model.js";
import { reportableRun } from "./redact.js";
import { SAMPLE_OPTIONS, SAMPLE_SECRETS, sampleCheck, sampleRun } from "./test-support.js";

test("results.json is the run plus its summary, pretty-printed", () => {
  const run = sampleRun();
  const text = renderJson(run);
  expect(text).toMatch(/^\{\n {2}"reportVersion": 2,\n/);
  expect(text.endsWith("}\n")).toBe(true);
  const { reportVersion, exitCode, summary, ...rest } = JSON.parse(text);
  expect(reportVersion).toBe(2);
  expect(exitCode).toBe(1);
  expect(rest).toEqual(reportableRun(run));
  expect(summary).toEqual(summarize(run));
});

test("results.json carries the exit code, and why a run is no verdict: a gate never reads totals alone", () => {
  const nothing = JSON.parse(renderJson(sampleRun({ checks: [], findings: [] })));
  expect(nothing).toMatchObject({ exitCode: 2, summary: { totals: { failed: 0 } } });
  expect(nothing.noVerdict).toMatch(/^nothing ran: .*; no verdict; exit 2$/);
  const clean = JSON.parse(renderJson(sampleRun({ checks: [sampleCheck()], findings: [] })));
  expect(clean.exitCode).toBe(0);
  expect(clean).not.toHaveProperty("noVerdict");
});

test("no key reaches results.json, however JSON would spell it", () => {
  const tricky = `k"\\ey\u0001-123`;
  const text = renderJson(sampleRun({ options: { ...SAMPLE_OPTIONS, idField: tricky } }), {
    secrets: [...SAMPLE_SECRETS, tricky],
  });
  for (const secret of [...SAMPLE_SECRETS, tricky]) {
    expect(text).not.toContain(secret);
    expect(text).not.toContain(JSON.stringify(secret).slice(1, -1));
  }
  expect(text).toContain("Bearer ***");
});
