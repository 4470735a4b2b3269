import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const REPO_ROOT = resolve(fileURLToPath(new URL("../..", import.meta.url)));
const reports = mkdtempSync(join(tmpdir(), "agent-harness-tsx-fallback-"));
afterAll(() => rmSync(reports, { recursive: true, force: true }));

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

describe("a checkout's CLI through tsx (the fallback where it cannot compile)", () => {
  it("runs verify's suites: the workers load the TypeScript sources through vite", async () => {
    const args = ["verify", "--suites", "functional", "--sections", "§1", "--workers", "1", "--report-dir", reports];
    const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((done) =>
      execFile(
        process.execPath,
        ["--input-type=module", "-e", THROUGH_TSX, ...args],
        { cwd: REPO_ROOT, timeout: 120_000 },
        (err, stdout, stderr) => done({ code: typeof err?.code === "number" ? err.code : err ? -1 : 0, stdout, stderr }),
      ),
    );
    expect(stdout, `${stdout.slice(-1500)}\n${stderr}`).toMatch(/\n\d+ passed, 0 failed\n/);
    expect(code, stderr).toBe(0);
  });
});
