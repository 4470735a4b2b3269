/**
 * The module boundaries of STYLE are enforced by biome's noRestrictedImports (biome.json).
 * Each row is a file that breaks one rule, at a relative depth the rule must still catch; it
 * is linted with the repo's own biome.json in a scratch tree laid out like the repo, so the
 * rows never touch the working tree.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, test } from "vitest";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const BIOME = join(ROOT, "node_modules/.bin/biome");

interface Row {
  rule: string;
  /** where the offending file sits, relative to the repo root */
  file: string;
  from: string;
  /** true: the import is allowed and must lint clean */
  allowed?: boolean;
}

/** Each rule with the files that break it ([file, import]) and, where it has any, the imports it allows. */
const RULES: { rule: string; breaks: [string, string][]; allows?: [string, string][] }[] = [
  {
    rule: "contract imports nothing else",
    breaks: [
      ["src/contract/x.ts", "../server/app.js"],
      ["src/contract/deep/x.ts", "../../client/client.js"],
      ["src/contract/x.ts", "../../suites/support/harness.js"],
      ["src/contract/x.ts", "../plan/plan.js"],
      ["src/contract/x.ts", "../run/verify.js"],
    ],
  },
  {
    rule: "server imports only contract",
    breaks: [
      ["src/server/plugins/x.ts", "../../report/model.js"],
      ["src/server/x.ts", "../client/index.js"],
      ["src/server/faults/x.ts", "../../checks/run.js"],
      ["src/server/x.ts", "../../fixtures/expand.js"],
      ["src/server/routes/x.ts", "../../net/delay-proxy.js"],
      ["src/server/x.ts", "../run/lifecycle.js"],
    ],
    allows: [["src/server/plugins/x.ts", "../../contract/index.js"]],
  },
  {
    rule: "harness never imports the server",
    breaks: [
      ["src/client/x.ts", "../server/plugins/guard.js"],
      ["src/checks/x.ts", "../server/app.js"],
      ["src/report/x.ts", "../server/store.js"],
      ["src/target/x.ts", "../server/app.js"],
      ["src/model/x.ts", "../server/store.js"],
      ["src/run/x.ts", "../server/app.js"],
      ["src/cli/x.ts", "../server/faults/index.js"],
      ["suites/functional/x.test.ts", "../../src/server/app.js"],
      ["suites/support/deep/x.ts", "../../../src/server/faults/index.js"],
    ],
    allows: [["src/target/embedded.ts", "../server/app.js"]],
  },
  {
    rule: "report never imports plan: plan imports the results types from report",
    breaks: [
      ["src/report/x.ts", "../plan/plan.js"],
      ["src/report/deep/x.ts", "../../plan/session.js"],
      ["src/report/x.ts", "../server/app.js"],
    ],
    allows: [["src/plan/x.ts", "../report/plan-types.js"]],
  },
  {
    rule: "a run never imports the command line: src/cli calls src/run",
    breaks: [
      ["src/run/x.ts", "../cli/config.js"],
      ["src/run/deep/x.ts", "../../cli/main.js"],
      ["src/run/x.ts", "../server/app.js"],
    ],
    allows: [["src/cli/x.ts", "../run/verify.js"]],
  },
  {
    rule: "server tests import only contract (and may read the fixtures)",
    breaks: [
      ["src/server/x.test.ts", "../client/index.js"],
      ["src/server/test-support.ts", "../../suites/support/harness.js"],
      ["src/server/test-support-http.ts", "../client/index.js"],
    ],
    allows: [
      ["src/server/x.test.ts", "../../fixtures/expand.js"],
      ["src/server/test-support.ts", "../../fixtures/expand.js"],
    ],
  },
];

const ROWS: Row[] = RULES.flatMap(({ rule, breaks, allows = [] }) => [
  ...breaks.map(([file, from]) => ({ rule, file, from })),
  ...allows.map(([file, from]) => ({ rule, file, from, allowed: true })),
]);

const scratch = mkdtempSync(join(tmpdir(), "lint-boundaries-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The repo's biome.json without the parts that need a git checkout. */
function writeConfig(dir: string): void {
  const config = JSON.parse(readFileSync(join(ROOT, "biome.json"), "utf8"));
  delete config.$schema;
  config.vcs = { enabled: false };
  writeFileSync(join(dir, "biome.json"), JSON.stringify(config));
}

function lint(row: Row, index: number): { rules: string[] } {
  const dir = join(scratch, String(index));
  mkdirSync(join(dir, dirname(row.file)), { recursive: true });
  writeConfig(dir);
  writeFileSync(join(dir, row.file), `import { thing } from "${row.from}";\n\nexport const used = thing;\n`);
  let out: string;
  try {
    out = execFileSync(BIOME, ["lint", "--reporter=json", row.file], { cwd: dir, encoding: "utf8", stdio: "pipe" });
  } catch (err) {
    out = String((err as { stdout?: unknown }).stdout ?? ""); // biome exits 1 when it finds an error
  }
  const report = JSON.parse(out) as { diagnostics: { category: string }[] };
  return { rules: report.diagnostics.map((d) => d.category) };
}

describe("module boundaries (biome noRestrictedImports)", () => {
  test.for(ROWS.map((row, i) => [`${row.file} → ${row.from}`, row, i] as const))("%s", { timeout: 30_000 }, ([, row, i]) => {
    const { rules } = lint(row, i);
    if (row.allowed) expect(rules, `${row.rule}`).not.toContain("lint/style/noRestrictedImports");
    else expect(rules, `${row.rule}`).toContain("lint/style/noRestrictedImports");
  });
});
