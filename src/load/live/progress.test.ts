import { expect, test } from "vitest";
import { LoadRecorder } from "../recorder.js";
import { answer, deploymentAt } from "../test-support.js";
import { RunProgress } from "./progress.js";

test("a long run's line: elapsed, rate sent of planned over the last stretch, errors so far", () => {
  const recorder = new LoadRecorder(deploymentAt("http://127.0.0.1:9/v1"), "capacity");
  const progress = new RunProgress();
  progress.watch(recorder);
  expect(progress.line(recorder.startedAt + 1000)).toBeUndefined(); // no planned rate: not a long run's line
  recorder.plannedPerSecond = 40;
  for (let i = 0; i < 80; i++) recorder.observe(answer(i < 78 ? 200 : 503, 5, recorder.startedAt + 100));
  expect(progress.line(recorder.startedAt + 2000)).toBe("capacity: 2 s, 40.0 req/s sent of 40 planned, 2 error(s) so far");
  for (let i = 0; i < 10; i++) recorder.observe(answer(200, 5, recorder.startedAt + 2100));
  expect(progress.line(recorder.startedAt + 3000)).toMatch(/^capacity: 3 s, 10\.0 req\/s sent of 40 planned, 2 error/);
});
