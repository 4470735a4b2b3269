import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const PACKAGE_NAME = "agent-harness";

/**
 * The folder holding the harness's package.json: the checkout runs this file from src/run, the
 * installed package from dist/src/run, so the root is the nearest folder above named in a
 * package.json as the harness.
 */
function findPackageRoot(): { root: string; version: string } {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = join(dir, "package.json");
    if (existsSync(file)) {
      // read by hand, not with zod: `--help` and `--version` load nothing they do not need
      const manifest: unknown = JSON.parse(readFileSync(file, "utf8"));
      const field = (name: string) =>
        typeof manifest === "object" && manifest !== null ? Reflect.get(manifest, name) : undefined;
      const version = field("version");
      if (field("name") === PACKAGE_NAME && typeof version === "string") return { root: dir, version };
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package.json named ${PACKAGE_NAME} above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

const found = findPackageRoot();
export const PACKAGE_ROOT = found.root;
export const PACKAGE_VERSION = found.version;
/** the command line entry point, the same in a checkout and in the installed package */
export const BIN_PATH = join(PACKAGE_ROOT, "bin/agent-harness.js");
