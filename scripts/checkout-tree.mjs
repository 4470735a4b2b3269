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

/** A hash of the sources and of how they are compiled (these options, tsconfig.json, esbuild's version). */
function versionOf(root, files) {
  const hash = createHash("sha256");
  hash.update(JSON.stringify(COMPILE_OPTIONS));
  for (const file of ["node_modules/esbuild/package.json", "tsconfig.json"])
    hash.update(existsSync(join(root, file)) ? readFileSync(join(root, file)) : "").update("\0");
  for (const file of files)
    hash
      .update(file)
      .update("\0")
      .update(readFileSync(join(root, file)))
      .update("\0");
  return hash.digest("hex").slice(0, 16);
}

/** A compile error of the sources: the CLI says it in one line, as running them would. */
export class CompileError extends Error {}

/**
 * The folder (relative to the checkout `root`) of the compiled CLI for the sources as they are now,
 * compiled first if no start has. Undefined when it cannot be made here (no esbuild installed, a
 * checkout it may not write, sources that changed while they compiled): the caller then runs the
 * sources through tsx. A source esbuild cannot compile is a CompileError.
 *
 * A folder named by a version is always whole: it is made under another name and renamed into
 * place, and renamed away before it is deleted.
 */
export async function compiledCheckout(root = checkoutRoot) {
  const treesDir = join(root, ".build", "cli");
  let name;
  try {
    const files = sources(root);
    name = versionOf(root, files);
    const tree = join(treesDir, name);
    if (!existsSync(tree)) {
      const partial = join(treesDir, `${name}.${process.pid}.partial`);
      const { build } = await import("esbuild");
      mkdirSync(treesDir, { recursive: true });
      try {
        await build({
          ...COMPILE_OPTIONS,
          logLevel: "silent",
          absWorkingDir: root,
          entryPoints: files,
          outdir: partial,
          outbase: ".",
        });
        // an edit while it compiled: the tree may hold either version, so it is named by neither
        if (versionOf(root, sources(root)) !== name) return undefined;
        renameSync(partial, tree);
      } catch (err) {
        const first = err?.errors?.[0];
        if (first)
          throw new CompileError(
            `${first.location ? `${first.location.file}:${first.location.line}:${first.location.column + 1}: ` : ""}${first.text}`,
          );
        if (!existsSync(tree)) throw err;
        // another start put the same tree there first
      } finally {
        rmSync(partial, { recursive: true, force: true });
      }
    }
  } catch (err) {
    if (err instanceof CompileError) throw err;
    return undefined;
  }
  sweep(treesDir, name);
  return join(".build", "cli", name);
}

/**
 * Marks the tree in use (a start's date on it), and deletes the trees no start has used for a
 * day, and what starts that died left: each is renamed away first, so no start ever loads half of
 * one. Nothing here stops the run: a tree it cannot date or delete is left.
 */
function sweep(treesDir, inUse) {
  const now = new Date();
  try {
    utimesSync(join(treesDir, inUse), now, now);
  } catch {}
  let entries = [];
  try {
    entries = readdirSync(treesDir);
  } catch {}
  for (const other of entries) {
    if (other === inUse) continue;
    try {
      if (now.getTime() - statSync(join(treesDir, other)).mtimeMs <= UNUSED_MS) continue;
      const doomed = /\.(partial|deleting)$/.test(other) ? other : `${other}.${process.pid}.deleting`;
      if (doomed !== other) renameSync(join(treesDir, other), join(treesDir, doomed));
      rmSync(join(treesDir, doomed), { recursive: true, force: true });
    } catch {
      // another start's tree, renamed or removed meanwhile
    }
  }
}
