import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { readReplayFile } from "./verify.js";

const dir = mkdtempSync(join(tmpdir(), "agent-harness-replay-file-"));
const fileWith = (name: string, replay: object) => {
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify(replay));
  return file;
};
const shrunk = { property: "create-invalid", seed: 7, path: "3:1:0" };

/**
 * A replay reproduces a property's shrunk case only with the options that shaped its generators:
 * the seed, and the request budget (a budgeted run draws shorter sequences and smaller
 * populations). The file keeps them; a replay that asks for another is refused in one line.
 */
describe("a property replay file", () => {
  test("keeps the budget the failing run had, and the mock-model flag", () => {
    const file = fileWith("budgeted.json", { ...shrunk, maxRequests: 300, referenceFaults: false });
    expect(readReplayFile(file, undefined, undefined)).toEqual({ ...shrunk, maxRequests: 300, referenceFaults: false });
    expect(readReplayFile(file, 7, 300)).toMatchObject({ maxRequests: 300 });
  });

  test("refuses another budget or another seed than the file's", () => {
    const file = fileWith("refused.json", { ...shrunk, maxRequests: 300 });
    expect(() => readReplayFile(file, undefined, 600)).toThrow(/written with --max-requests 300, not 600/);
    expect(() => readReplayFile(file, 8, undefined)).toThrow(/written with seed 7, not 8/);
  });

  test("written by an earlier version (no options recorded): read as it is", () => {
    expect(readReplayFile(fileWith("old.json", shrunk), undefined, 600)).toEqual(shrunk);
  });
});
