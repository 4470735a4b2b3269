import type { NeedsOf } from "../plan/lanes.js";
import { SUITE_FILE_NEEDS } from "./suite-needs.generated.js";

/** A file's path from suites/ on, without its extension: how the declarations name it. */
export const suitePath = (file: string) => {
  const path = file.replace(/\\/g, "/");
  return path.slice(path.lastIndexOf("suites/")).replace(/\.(ts|js)$/, "");
};

/** What a suite file declared it needs (suites/support/declare-file.ts), read without running it. */
export const needsOfFile: NeedsOf = (file) => SUITE_FILE_NEEDS[suitePath(file)];
