// The checkout's CLI, compiled: bin/agent-harness.js runs src/ from a JavaScript tree made here
// rather than through tsx, whose loader hooks answer every import from a thread of their own:
// the CLI took about 0.8 s longer to load that way (`verify` from the checkout, docs/figures.md).
//
// The tree is kept per version of the sources (a hash of every file under src/ and of how they are
// compiled), under .build/cli/, so an edit is compiled at the next start (esbuild, about 0.4 s) and
// never run stale. Only src/ is compiled, not the suites: the CLI then runs the checkout's
// TypeScript suites in vitest (src/run/suites.ts), so a report names the files a developer edits.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { COMPILE_OPTIONS } from "./compile-options.mjs";

const checkoutRoot = resolve(fileURLToPath(new URL("..", import.meta.url)));
/** a tree no start has used for this long goes (a long run may still import from the one it started with) */
const UNUSED_MS = 24 * 3600 * 1000;

/** The CLI's modules: src/ without its unit tests. */
const sources = (root) =>
  readdirSync(join(root, "src"), { recursive: true, encoding: "utf8" })
    .filter((path) => path.endsWith(".ts") && !path.endsWith(".test.ts"))
    .map((path) => join("src", path))
    .sort();

/** A hash of the sources and of how they are compiled (these options, esbuild's version). */
function versionOf(root, files) {
  const hash = createHash("sha256");
  hash.update(JSON.stringify(COMPILE_OPTIONS));
  hash.update(readFileSync(join(root, "node_modules/esbuild/package.json")));
  for (const file of files)
    hash
      .update(file)
      .update("\0")
      .update(readFileSync(join(root, file)))
      .update("\0");
  return hash.digest("hex").slice(0, 16);
}

/**
 * The folder (relative to the checkout `root`) of the compiled CLI for the sources as they are now,
 * compiled first if no start has; undefined when it cannot be made (no esbuild installed, a
 * checkout it may not write): the caller then runs the sources through tsx.
 */
export async function compiledCheckout(root = checkoutRoot) {
  try {
    const treesDir = join(root, ".build", "cli");
    const files = sources(root);
    const name = versionOf(root, files);
    const tree = join(treesDir, name);
    if (!existsSync(join(tree, "src/cli/main.js"))) {
      // compiled aside and renamed into place: a start at the same moment never loads half a tree
      const partial = `${tree}.${process.pid}.partial`;
      const { build } = await import("esbuild");
      mkdirSync(treesDir, { recursive: true });
      try {
        await build({ ...COMPILE_OPTIONS, absWorkingDir: root, entryPoints: files, outdir: partial, outbase: "." });
        renameSync(partial, tree);
      } catch (err) {
        if (!existsSync(join(tree, "src/cli/main.js"))) throw err;
        // another start put the same tree there first
      } finally {
        rmSync(partial, { recursive: true, force: true });
      }
    }
    const now = new Date();
    utimesSync(tree, now, now);
    for (const other of readdirSync(treesDir)) {
      if (other === name) continue;
      try {
        if (now.getTime() - statSync(join(treesDir, other)).mtimeMs > UNUSED_MS)
          rmSync(join(treesDir, other), { recursive: true, force: true });
      } catch {
        // another start's partial tree, renamed or removed meanwhile
      }
    }
    return join(".build", "cli", name);
  } catch {
    return undefined;
  }
}
