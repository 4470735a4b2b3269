import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { formatTransitionTable, mergeCounts } from "../model/transitions.js";

/**
 * What a run's property-based suites exercised, as the report keeps it: cases and command
 * sequences generated, the requests they sent, the generators covered and the status
 * transitions the stateful commands drove agents through (src/model/transitions.ts).
 */
export interface PropertySummary {
  cases: number;
  sequences: number;
  requests: number;
  durationMs: number;
  generators: string[];
  /** `from>to` → how often the stateful suite took that road */
  transitions: Record<string, number>;
}

/** One line of property.jsonl, as the property suite writes it. */
const propertyRow = z.object({
  cases: z.number(),
  sequences: z.number(),
  requests: z.number(),
  durationMs: z.number(),
  generators: z.record(z.string(), z.number()),
  transitions: z.record(z.string(), z.number()).optional(),
});

/** The titles of the properties that ran (each wrote its row): a replay's property must be among them. */
export function propertiesRan(runDir: string): string[] {
  const file = join(runDir, "property.jsonl");
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => z.object({ title: z.string() }).safeParse(JSON.parse(line)).data?.title)
    .filter((t): t is string => t !== undefined);
}

/** The property suites' rows of a run folder, added up; undefined when no property suite ran. */
export function readPropertySummary(runDir: string): PropertySummary | undefined {
  const file = join(runDir, "property.jsonl");
  if (!existsSync(file)) return undefined;
  const rows = readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => propertyRow.parse(JSON.parse(line)));
  const sum = (k: "cases" | "sequences" | "requests" | "durationMs") => rows.reduce((n, r) => n + r[k], 0);
  return {
    cases: sum("cases"),
    sequences: sum("sequences"),
    requests: sum("requests"),
    durationMs: sum("durationMs"),
    generators: [...new Set(rows.flatMap((r) => Object.keys(r.generators)))].sort(),
    transitions: mergeCounts(rows.map((r) => r.transitions ?? {})),
  };
}

/** The property suite's figures: cases, sequences, requests, generators and transitions covered. */
export function formatPropertySummary(summary: PropertySummary | undefined): string {
  if (!summary) return "";
  const { cases, sequences, requests, durationMs, generators, transitions } = summary;
  const table = Object.keys(transitions).length ? `${formatTransitionTable(transitions)}\n` : "";
  return `property: ${cases} cases and ${sequences} command sequences, ${requests} requests in ${(durationMs / 1000).toFixed(1)} s; ${generators.length} generators covered: ${generators.join(", ")}\n${table}`;
}
