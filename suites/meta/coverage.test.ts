import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { CLAUSE_BY_ID, CLAUSES } from "../../src/contract/index.js";

/** Every clause id a check cites: `check("id" | ["id", …], …)` in the suites, `clause: "id"` in src/checks. */
function citedClauses(): Map<string, string[]> {
  const cited = new Map<string, string[]>();
  const add = (id: string, where: string) => cited.set(id, [...(cited.get(id) ?? []), where]);
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]));
  for (const file of walk("suites/functional").filter((f) => f.endsWith(".test.ts"))) {
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/\bcheck\(\s*(\[[^\]]*\]|"[^"]+")/g))
      for (const id of m[1]!.matchAll(/"([^"]+)"/g)) add(id[1]!, file);
  }
  for (const file of walk("src/checks").filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"))) {
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/\bclause:\s*"([^"]+)"/g)) add(m[1]!, file);
  }
  return cited;
}

describe("meta: PROFILE clause coverage", () => {
  const cited = citedClauses();

  test("every cited clause id exists in the registry", () => {
    const unknown = [...cited.keys()].filter((id) => !CLAUSE_BY_ID.has(id));
    expect(unknown).toEqual([]);
  });

  test.for(
    CLAUSES.filter((c) => c.level === "MUST").map((c) => [c.id, c.section] as const),
  )("MUST clause %s (%s) has at least one check", ([id]) => {
    expect(cited.get(id) ?? [], `no check cites ${id}`).not.toEqual([]);
  });
});
