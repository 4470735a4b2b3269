/**
 * The typecheck of the whole tree (tsconfig.json: src, suites, bin, fixtures, scripts, the vitest
 * configs), as a test of the unit project: `npm test` runs it beside the other unit files instead
 * of before every project. `npm run typecheck` runs the same command on its own.
 *
 * The checker is TypeScript 7, the native compiler (the `typescript-native` alias): 5 s and 9 s of
 * CPU for the tree against 20 s and 31 s with TypeScript 5 on two cores, the same diagnostics in the
 * same form (docs/figures.md). TypeScript 5 stays for its JavaScript API, which 7 does not offer
 * (the structure lint parses the sources with it). Both install a `tsc` command, so the scripts
 * name the checker by its path.
 */
import { execFile } from "node:child_process";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, test } from "vitest";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const TSC = join(ROOT, "node_modules/typescript-native/bin/tsc");

test("tsc -p tsconfig.json --noEmit reports no error", { timeout: 180_000 }, async () => {
  const result = await new Promise<{ code: number | null; output: string }>((done) => {
    execFile(
      process.execPath,
      [TSC, "-p", "tsconfig.json", "--noEmit", "--pretty", "false"],
      { cwd: ROOT, maxBuffer: 64 * 1024 * 1024, timeout: 170_000, killSignal: "SIGTERM" },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : null) : 0;
        done({ code, output: `${stdout}${stderr}` });
      },
    );
  });
  // one line per diagnostic (file(line,col): error TSxxxx: …): the failure lists them all
  const diagnostics = result.output.split("\n").filter((line) => /error TS\d+/.test(line));
  expect(diagnostics).toEqual([]);
  expect(result.code, result.output.slice(-4000)).toBe(0);
});
