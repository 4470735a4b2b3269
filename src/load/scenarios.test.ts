import { readdirSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { SCENARIOS } from "./scenarios.js";

describe("quick load scenarios", () => {
  test("each quick group has its file in suites/load, and every other scenario runs from long.test.ts", () => {
    const files = readdirSync(new URL("../../suites/load/", import.meta.url)).filter((f) => f.endsWith(".test.ts"));
    const groups = [...new Set(SCENARIOS.flatMap((s) => (s.quickGroup === undefined ? [] : [s.quickGroup])))].sort();
    expect(files.sort()).toEqual([...groups.map((g) => `quick-${g}.test.ts`), "long.test.ts"].sort());
    // the tenants' drive runs from `agent-harness load --keys-file` only, never in a quick group
    for (const s of SCENARIOS.filter((s) => s.tenants)) expect(s.quickGroup, s.id).toBeUndefined();
  });
});
