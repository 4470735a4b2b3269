import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { codeVersion, SectionIndex } from "./section-index.js";

/** A harness tree of two suite files, and a cache folder beside it. */
function tree() {
  const root = mkdtempSync(join(tmpdir(), "section-index-"));
  mkdirSync(join(root, "src"));
  mkdirSync(join(root, "suites", "functional"), { recursive: true });
  writeFileSync(join(root, "src", "a.ts"), "export const a = 1;\n");
  writeFileSync(join(root, "suites", "functional", "x.test.ts"), "// x\n");
  return { root, cache: join(root, "cache") };
}

describe("which sections each suite file's checks cite", () => {
  test("a run with --sections leaves out only the files known to have no check there", () => {
    const { root, cache } = tree();
    const first = SectionIndex.open(root, cache);
    expect(first.without(["§1"], ["suites/functional/x.test", "suites/functional/y.test"])).toEqual([]);
    first.record("suites/functional/x.test", ["§5", "§7", "list.order", "smoke"]);
    first.save();
    const next = SectionIndex.open(root, cache);
    // y was never collected: it is collected, whatever it holds
    expect(next.without(["§1"], ["suites/functional/x.test", "suites/functional/y.test"])).toEqual(["suites/functional/x.test"]);
    expect(next.without(["§1", "§7"], ["suites/functional/x.test"])).toEqual([]);
    // a clause id selects as its section does
    expect(next.without(["list.order"], ["suites/functional/x.test"])).toEqual([]);
    expect(next.without(["list.filter"], ["suites/functional/x.test"])).toEqual(["suites/functional/x.test"]);
  });

  test.for([
    ["src", "a.ts"],
    ["fixtures", "rows.json"],
  ])("an edit in %s/ starts a new index: a check moved between files is never left out, the old index goes", ([folder, file]) => {
    const { root, cache } = tree();
    mkdirSync(join(root, folder!), { recursive: true });
    const before = codeVersion(root);
    const index = SectionIndex.open(root, cache);
    index.record("suites/functional/x.test", ["§5"]);
    index.save();
    writeFileSync(join(root, folder!, file!), "2\n");
    expect(codeVersion(root)).not.toBe(before);
    const next = SectionIndex.open(root, cache);
    expect(next.without(["§1"], ["suites/functional/x.test"])).toEqual([]);
    next.record("suites/functional/x.test", ["§1"]);
    next.save();
    expect(readdirSync(cache)).toEqual([`sections-${codeVersion(root)}.json`]);
  });

  test("what a run collected while the code changed under it is not kept", () => {
    const { root, cache } = tree();
    const opened = codeVersion(root);
    const index = SectionIndex.open(root, cache);
    index.record("suites/functional/x.test", ["§5"]);
    writeFileSync(join(root, "src", "a.ts"), "export const a = 3;\n");
    index.save();
    expect(existsSync(join(cache, `sections-${opened}.json`))).toBe(false);
    expect(existsSync(join(cache, `sections-${codeVersion(root)}.json`))).toBe(false);
  });

  test("a file that is not an index (half written, or another format) is an empty index", () => {
    const { root, cache } = tree();
    mkdirSync(cache);
    writeFileSync(join(cache, `sections-${codeVersion(root)}.json`), '{"files": {"suites/functional/x.test": [');
    expect(SectionIndex.open(root, cache).without(["§1"], ["suites/functional/x.test"])).toEqual([]);
  });
});
