import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const REPO_ROOT = resolve(fileURLToPath(new URL("../..", import.meta.url)));
const scratch = mkdtempSync(join(tmpdir(), "agent-harness-checkout-cli-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** One section's functional checks on one worker: a few seconds, every suite module loaded. */
const VERIFY = ["verify", "--suites", "functional", "--sections", "§1", "--workers", "1"];

/** Runs node with `argv` in the checkout; `env` over this process's, less a compiled tree named by a test setup. */
function runNode(argv: string[], env: Record<string, string> = {}) {
  const { AGENT_HARNESS_COMPILED: _named, ...inherited } = process.env;
  return new Promise<{ code: number; stdout: string; stderr: string }>((done) =>
    execFile(process.execPath, argv, { cwd: REPO_ROOT, timeout: 120_000, env: { ...inherited, ...env } }, (err, stdout, stderr) =>
      done({ code: typeof err?.code === "number" ? err.code : err ? -1 : 0, stdout, stderr }),
    ),
  );
}

const expectPassed = ({ code, stdout, stderr }: { code: number; stdout: string; stderr: string }) => {
  expect(stdout, `${stdout.slice(-1500)}\n${stderr}`).toMatch(/\n\d+ passed, 0 failed\n/);
  expect(code, stderr).toBe(0);
};

/**
 * What bin/agent-harness.js does where a checkout cannot compile its CLI (no esbuild, a checkout it
 * may not write): tsx's hooks registered, the TypeScript CLI imported and run. Its workers then
 * load the harness's sources through vite, not node's loader, which cannot read TypeScript.
 */
const THROUGH_TSX = `
const { register } = await import("tsx/esm/api");
register();
const { main } = await import(${JSON.stringify(pathToFileURL(join(REPO_ROOT, "src/cli/main.ts")).href)});
process.exitCode = await main(process.argv.slice(1));`;

describe("a checkout's CLI", () => {
  it(
    "through tsx (the fallback where it cannot compile) runs verify's suites: the workers load the TypeScript sources through vite",
    {
      timeout: 120_000,
    },
    async () => {
      expectPassed(await runNode(["--input-type=module", "-e", THROUGH_TSX, ...VERIFY, "--report-dir", join(scratch, "tsx")]));
    },
  );

  // The suites import the harness's TypeScript sources; a checkout's CLI runs a compiled copy of
  // them (.build/cli/), and sends those imports there, for its workers to load with node's own
  // loader instead of vite transforming each module in the CLI and evaluating it in every worker
  // (src/run/compiled-source.ts; measured in docs/figures.md). A run passes either way: what
  // shows the redirect is vitest's module cache (under TMPDIR), which holds each module vite
  // transformed with the imports it makes.
  it(
    "compiled sends the suites' imports of src/ to the compiled tree: no module vite transformed imports one of src/",
    {
      timeout: 120_000,
    },
    async () => {
      const tmp = join(scratch, "tmp");
      mkdirSync(tmp);
      expectPassed(
        await runNode(["bin/agent-harness.js", ...VERIFY, "--report-dir", join(scratch, "compiled")], { TMPDIR: tmp }),
      );
      const caches = readdirSync(tmp).filter((name) => name.startsWith("agent-harness-vite-"));
      expect(caches).toHaveLength(1);
      const modules = join(tmp, caches[0]!, "modules");
      const imports = readdirSync(modules).flatMap((file) =>
        [...readFileSync(join(modules, file), "utf8").matchAll(/__vite_ssr_import__\("([^"]+)"/g)].map((m) => m[1]!),
      );
      // the suites' own modules were transformed, and imported the compiled tree's
      expect(imports).toContain("/suites/support/harness.ts");
      expect(imports.filter((path) => /^\/\.build\/cli\/[0-9a-f]+\/src\/.+\.js$/.test(path)).length).toBeGreaterThan(0);
      // no module imported a TypeScript source of src/ (vite would then have transformed it)
      expect(imports.filter((path) => path.startsWith("/src/"))).toEqual([]);
    },
  );
});
