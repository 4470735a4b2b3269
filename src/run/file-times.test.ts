import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { FileTimes } from "./file-times.js";

const dirs: string[] = [];
const scratch = () => {
  const dir = mkdtempSync(join(tmpdir(), "agent-harness-file-times-"));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** files as a run's sequencer sees them: [name, size in bytes] */
const SIZES: Record<string, number> = {
  "suites/functional/limits": 600,
  "suites/functional/messages": 10_000,
  "suites/functional/auth": 13_000,
  "suites/functional/get": 1_800,
  "suites/property/stateful": 33_000,
};
const sorted = (times: FileTimes, files: string[]) =>
  files
    .map((f) => [f, SIZES[f] ?? 0] as const)
    .sort(times.order())
    .map(([f]) => f);

describe("FileTimes", () => {
  test("with no times kept: the larger files first, as vitest orders files it has no times for", () => {
    const times = FileTimes.open(scratch(), "embedded, W = 2 s");
    expect(
      sorted(times, [
        "suites/functional/get",
        "suites/functional/limits",
        "suites/property/stateful",
        "suites/functional/auth",
        "suites/functional/messages",
      ]),
    ).toEqual([
      "suites/property/stateful",
      "suites/functional/auth",
      "suites/functional/messages",
      "suites/functional/get",
      "suites/functional/limits",
    ]);
  });

  test("times saved by one run order the next run of the same kind longest first, a file not timed first", () => {
    const dir = scratch();
    const first = FileTimes.open(dir, "embedded, W = 2 s");
    first.record("suites/functional/auth", 9_000.4);
    first.record("suites/property/stateful", 22_000);
    first.record("suites/functional/get", 100);
    first.save();
    const next = FileTimes.open(dir, "embedded, W = 2 s");
    expect(next.of("suites/functional/auth")).toBe(9_000);
    expect(
      sorted(next, ["suites/functional/get", "suites/functional/auth", "suites/functional/limits", "suites/property/stateful"]),
    ).toEqual(["suites/functional/limits", "suites/property/stateful", "suites/functional/auth", "suites/functional/get"]);
    // another kind of run (another target, another window) keeps its own times
    expect(FileTimes.open(dir, "external, W = 60 s").of("suites/functional/auth")).toBeUndefined();
  });

  test("files shorter than the short bound start before the long ones (they would meet emptied buckets last), each part longest first", () => {
    const dir = scratch();
    const first = FileTimes.open(dir, "embedded, W = 2 s");
    for (const [file, ms] of [
      ["suites/functional/auth", 2_900],
      ["suites/property/stateful", 22_000],
      ["suites/functional/get", 100],
      ["suites/functional/limits", 9_000],
    ] as const)
      first.record(file, ms);
    first.save();
    const files = ["suites/functional/get", "suites/functional/auth", "suites/functional/limits", "suites/property/stateful"];
    expect(sorted(FileTimes.open(dir, "embedded, W = 2 s", 3_000), [...files, "suites/functional/messages"])).toEqual([
      "suites/functional/messages",
      "suites/functional/auth",
      "suites/functional/get",
      "suites/property/stateful",
      "suites/functional/limits",
    ]);
    // no bound: longest first throughout
    expect(sorted(FileTimes.open(dir, "embedded, W = 2 s"), files)).toEqual([
      "suites/property/stateful",
      "suites/functional/limits",
      "suites/functional/auth",
      "suites/functional/get",
    ]);
  });

  test("a save keeps the other kinds' times and the files this run did not time", () => {
    const dir = scratch();
    const a = FileTimes.open(dir, "embedded, W = 2 s");
    a.record("suites/functional/auth", 5);
    a.record("suites/functional/get", 6);
    a.save();
    const b = FileTimes.open(dir, "external, W = 5 s");
    b.record("suites/functional/auth", 50);
    b.save();
    const c = FileTimes.open(dir, "embedded, W = 2 s");
    c.record("suites/functional/auth", 7);
    c.save();
    expect(JSON.parse(readFileSync(join(dir, "file-times.json"), "utf8"))).toEqual({
      runs: {
        "embedded, W = 2 s": { "suites/functional/auth": 7, "suites/functional/get": 6 },
        "external, W = 5 s": { "suites/functional/auth": 50 },
      },
    });
  });

  test("two runs open at once both keep their times: a save adds to what the file holds by then", () => {
    const dir = scratch();
    const a = FileTimes.open(dir, "embedded, W = 2 s, all");
    const b = FileTimes.open(dir, "embedded, W = 2 s, §7");
    a.record("suites/functional/auth", 5);
    b.record("suites/functional/limits", 9);
    a.save();
    b.save();
    expect(FileTimes.open(dir, "embedded, W = 2 s, all").of("suites/functional/auth")).toBe(5);
    expect(FileTimes.open(dir, "embedded, W = 2 s, §7").of("suites/functional/limits")).toBe(9);
  });

  test("an unreadable or half-written file is no times at all, and the next save replaces it", () => {
    const dir = scratch();
    writeFileSync(join(dir, "file-times.json"), '{"runs": {"embedded, W = 2 s": {"suites/functional/auth": 3');
    const times = FileTimes.open(dir, "embedded, W = 2 s");
    expect(times.of("suites/functional/auth")).toBeUndefined();
    times.record("suites/functional/get", 4);
    times.save();
    expect(FileTimes.open(dir, "embedded, W = 2 s").of("suites/functional/get")).toBe(4);
  });

  test("a folder it cannot write loses the times, never the run", () => {
    const times = FileTimes.open(join(scratch(), "file-times.json", "not-a-folder"), "embedded, W = 2 s");
    writeFileSync(join(dirs.at(-1)!, "file-times.json"), "a file where the folder would be");
    times.record("suites/functional/get", 4);
    expect(() => times.save()).not.toThrow();
    // nothing was kept: the next run there starts with no times
    expect(
      FileTimes.open(join(dirs.at(-1)!, "file-times.json", "not-a-folder"), "embedded, W = 2 s").of("suites/functional/get"),
    ).toBeUndefined();
  });
});
