import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { inject } from "vitest";
import type { ResultsJson } from "../../src/report/index.js";
import { type VerifyRun, verify } from "./verify-run.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** a folder of this vitest run's project (compiled-cli.ts): what its files share, such as the clean run */
    sharedDir: string;
  }
}

/**
 * The default `verify` of the clean reference (functional, property and quick load: the run a user
 * starts first), once for all the project's files: the fault runs read it (it passes every check,
 * every MUST clause is verified), the browser test reads its page. About 50 s of CPU-heavy run,
 * started by the first file that asks, alone (the project's files run one after another); the later
 * files read what it left in the project's shared folder.
 */
let pending: Promise<VerifyRun> | undefined;
export function cleanDefaultRun(): Promise<VerifyRun> {
  pending ??= shared();
  return pending;
}

async function shared(): Promise<VerifyRun> {
  const file = join(inject("sharedDir"), "clean-default-run.json");
  if (existsSync(file)) {
    const { code, output, runDir } = JSON.parse(readFileSync(file, "utf8")) as Omit<VerifyRun, "results">;
    const results = JSON.parse(readFileSync(join(runDir, "results.json"), "utf8")) as ResultsJson;
    return { code, output, runDir, results };
  }
  const run = await verify([]);
  writeFileSync(file, JSON.stringify({ code: run.code, output: run.output, runDir: run.runDir }));
  return run;
}
