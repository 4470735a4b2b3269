import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { SUITE_FILE_NEEDS } from "./suite-needs.generated.js";
import { needsOfFile } from "./suite-needs.js";
import { declarationOf, readSuiteNeeds } from "./test-support-suite-needs.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

describe("each suite file's declared needs", () => {
  test("the planner's copy is fresh: every suite file declares its needs once (npx tsx scripts/suite-needs.ts rewrites it)", () => {
    expect(SUITE_FILE_NEEDS).toEqual(readSuiteNeeds(ROOT));
    expect(needsOfFile(`${ROOT}suites/functional/list.test.ts`)).toBe(SUITE_FILE_NEEDS["suites/functional/list.test"]);
    expect(needsOfFile("dist\\suites\\functional\\list.test.js")).toBe(SUITE_FILE_NEEDS["suites/functional/list.test"]);
  });

  test("a declaration is literals only, once per file", () => {
    expect(declarationOf(`declareFile({ keys: ["readOnly"], sendsMessages: true });`, "a")).toEqual({
      keys: ["readOnly"],
      sendsMessages: true,
    });
    expect(() => declarationOf("const x = 1;", "b.test.ts")).toThrow(/b.test.ts: 0 top-level declareFile/);
    expect(() => declarationOf("declareFile({});\ndeclareFile({});", "c")).toThrow(/2 top-level/);
    expect(() => declarationOf("declareFile({ sendsMessages: yes });", "d")).toThrow(/literals only/);
  });

  const sourceOf = (path: string) => readFileSync(`${ROOT}${path}.ts`, "utf8");
  const entries = Object.entries(SUITE_FILE_NEEDS);

  // the source can show a file uses more than it declared (its shared helpers are read by the fixtures' own check)
  test.for(entries.filter(([, needs]) => !needs.keys?.length))("%s declares no key but a main one: its source uses none", ([
    path,
  ]) => {
    expect(
      sourceOf(path).match(/readOnlyApi|otherApi|quotaApi|agentlessApi|keys\.(readOnly|otherAccount|quota|agentless)\b/g) ?? [],
    ).toEqual([]);
  });

  test.for(
    entries.filter(([, n]) => !n.sendsMessages && !n.sendsUnpaced && !n.emptiesBuckets && !n.readsRemainingAcrossAnswers),
  )("%s declares it shares an account well: no message, no request unpaced, no Remaining across answers", ([path]) => {
    expect(sourceOf(path).match(/sendMessage|streamMessage|\/messages|pace: false|remaining|waitForRefill/gi) ?? []).toEqual([]);
  });
});
