import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { z } from "zod";
import { openApiDocument } from "./openapi.js";

/**
 * The emitted document in the two linters people load OpenAPI into: Redocly CLI with its
 * `recommended` rules and Spectral with `spectral:oas` (.spectral.yaml). No error, and no warning
 * but the ones explained below. A copy with a known defect shows the linters run and are read.
 */

const execFileAsync = promisify(execFile);
const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Warnings left as they are, by rule, each with the reason. */
const EXPLAINED = {
  redocly: {
    "info-license":
      "the document describes the Agent Management Service, not the harness; PROFILE names no licence for it, and none is made up",
  },
  spectral: {
    "info-contact": "PROFILE names no contact for the service the document describes, and none is made up",
  },
} as const;

const redoclyReport = z.object({
  problems: z.array(
    z.object({
      ruleId: z.string(),
      severity: z.string(),
      location: z.array(z.object({ source: z.object({ ref: z.string() }) })),
    }),
  ),
});
/** Spectral's severities: 0 error, 1 warning, 2 information, 3 hint. */
const spectralReport = z.array(z.object({ code: z.string(), severity: z.number(), source: z.string() }));

interface Problem {
  file: string;
  rule: string;
  severity: "error" | "warning" | "info";
}

const dir = mkdtempSync(join(tmpdir(), "agent-harness-openapi-"));
const emitted = join(dir, "openapi.json");
const defective = join(dir, "defective.json");
let redocly: Problem[];
let spectral: Problem[];

/** Runs a linter CLI of node_modules/.bin; exit 1 only says it found errors, so its JSON is read either way. */
async function lint(bin: string, args: string[]): Promise<string> {
  const command = join(ROOT, "node_modules/.bin", bin);
  const env = { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" };
  try {
    return (await execFileAsync(command, args, { cwd: ROOT, env, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 })).stdout;
  } catch (error) {
    const stdout = typeof error === "object" && error !== null ? Reflect.get(error, "stdout") : undefined;
    if (typeof stdout === "string" && stdout.trim().length > 0) return stdout;
    throw error;
  }
}

beforeAll(async () => {
  const document = openApiDocument();
  writeFileSync(emitted, JSON.stringify(document, null, 2));
  // the defect: a schema no operation uses, as the ListQuery component once was (both linters warn of it)
  const { components } = z.object({ components: z.record(z.string(), z.unknown()) }).parse(document);
  const { schemas } = z.object({ schemas: z.record(z.string(), z.unknown()) }).parse(components);
  const copy = { ...document, components: { ...components, schemas: { ...schemas, Unused: { type: "object" } } } };
  writeFileSync(defective, JSON.stringify(copy, null, 2));

  // Redocly writes one JSON report per file it is given: one run per file
  const redoclyOf = (file: string) => lint("redocly", ["lint", "--extends", "recommended", "--format", "json", file]);
  const [redoclyEmitted, redoclyDefective, spectralOut] = await Promise.all([
    redoclyOf(emitted),
    redoclyOf(defective),
    lint("spectral", ["lint", "--ruleset", join(ROOT, ".spectral.yaml"), "--format", "json", emitted, defective]),
  ]);
  redocly = [redoclyEmitted, redoclyDefective].flatMap((out) =>
    redoclyReport.parse(JSON.parse(out)).problems.map(
      (p): Problem => ({
        file: p.location[0]?.source.ref ?? "",
        rule: p.ruleId,
        severity: p.severity === "error" ? "error" : p.severity === "warn" ? "warning" : "info",
      }),
    ),
  );
  spectral = spectralReport.parse(JSON.parse(spectralOut)).map((p) => ({
    file: p.source,
    rule: p.code,
    severity: p.severity === 0 ? "error" : p.severity === 1 ? "warning" : "info",
  }));
}, 120_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const of = (problems: Problem[], file: string) => problems.filter((p) => p.file.endsWith(file.slice(dir.length)));
const warned = (problems: Problem[]) => [...new Set(problems.filter((p) => p.severity === "warning").map((p) => p.rule))].sort();

describe.for([
  ["Redocly CLI (recommended)", () => redocly, EXPLAINED.redocly],
  ["Spectral (spectral:oas)", () => spectral, EXPLAINED.spectral],
] as const)("the OpenAPI document in %s", ([, problems, explained]) => {
  test("has no error, and no warning but the explained ones", () => {
    const found = of(problems(), emitted);
    expect(found.filter((p) => p.severity === "error")).toEqual([]);
    expect(warned(found)).toEqual(Object.keys(explained).sort());
  });

  test("an unused component schema is warned of (the linter ran and its report is read)", () => {
    const found = warned(of(problems(), defective));
    expect(found.filter((rule) => !(rule in explained))).toEqual([expect.stringMatching(/unused-component/)]);
  });
});
