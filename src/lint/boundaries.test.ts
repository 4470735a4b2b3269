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

const ROWS: Row[] = [
  { rule: "contract imports nothing else", file: "src/contract/x.ts", from: "../server/app.js" },
  { rule: "contract imports nothing else", file: "src/contract/deep/x.ts", from: "../../client/client.js" },
  { rule: "contract imports nothing else", file: "src/contract/x.ts", from: "../../suites/support/harness.js" },
  { rule: "server imports only contract", file: "src/server/plugins/x.ts", from: "../../report/model.js" },
  { rule: "server imports only contract", file: "src/server/x.ts", from: "../client/index.js" },
  { rule: "server imports only contract", file: "src/server/faults/x.ts", from: "../../checks/run.js" },
  { rule: "harness never imports the server", file: "src/client/x.ts", from: "../server/plugins/guard.js" },
  { rule: "harness never imports the server", file: "src/checks/x.ts", from: "../server/app.js" },
  { rule: "harness never imports the server", file: "src/report/x.ts", from: "../server/store.js" },
  { rule: "harness never imports the server", file: "src/target/x.ts", from: "../server/app.js" },
  { rule: "harness never imports the server", file: "src/model/x.ts", from: "../server/store.js" },
  { rule: "harness never imports the server", file: "suites/functional/x.test.ts", from: "../../src/server/app.js" },
  { rule: "harness never imports the server", file: "suites/support/deep/x.ts", from: "../../../src/server/faults/index.js" },
  { rule: "the embedded target may", file: "src/target/embedded.ts", from: "../server/app.js", allowed: true },
  { rule: "the server may import the contract", file: "src/server/plugins/x.ts", from: "../../contract/index.js", allowed: true },
  { rule: "server imports only contract", file: "src/server/x.ts", from: "../../fixtures/expand.js" },
  { rule: "server tests import only contract", file: "src/server/x.test.ts", from: "../client/index.js" },
  { rule: "server tests import only contract", file: "src/server/test-support.ts", from: "../../suites/support/harness.js" },
  { rule: "server tests may read the fixtures", file: "src/server/x.test.ts", from: "../../fixtures/expand.js", allowed: true },
  {
    rule: "server tests may read the fixtures",
    file: "src/server/test-support.ts",
    from: "../../fixtures/expand.js",
    allowed: true,
  },
];

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
