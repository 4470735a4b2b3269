/**
 * What `verify` loads before it starts vitest's workers is on the main job's clock: the workers
 * fork only once the CLI has loaded. The load generator and the property tools run in those
 * workers (the quick load, the property suites); the CLI process imports them only when it needs
 * them (a deployment's load line, `load`), so the embedded default's start does not pay for them
 * (about 0.2 s: docs/figures.md). This follows the static imports from the verify command.
 */
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { expect, test } from "vitest";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const LOADED_LATER = ["autocannon", "fast-check", "json-schema-faker", "hdr-histogram-js"];

/** Each package reached from `entry` by static imports alone, with the chain of files that reaches it. */
async function staticReach(entry: string): Promise<Map<string, string[]>> {
  const { metafile } = await build({
    entryPoints: [entry],
    absWorkingDir: ROOT,
    bundle: true,
    write: false,
    metafile: true,
    platform: "node",
    format: "esm",
    packages: "external",
    logLevel: "silent",
  });
  const chains = new Map<string, string[]>([[entry, [entry]]]);
  const queue = [entry];
  for (let file = queue.shift(); file !== undefined; file = queue.shift())
    for (const imported of metafile.inputs[file]?.imports ?? []) {
      if (imported.kind !== "import-statement" || chains.has(imported.path)) continue;
      chains.set(imported.path, [...chains.get(file)!, imported.path]);
      if (!imported.external) queue.push(imported.path);
    }
  return chains;
}

test("verify's start imports none of the load generator's or the property suites' packages", async () => {
  const reach = await staticReach("src/cli/verify.ts");
  // the check can fail: the same walk from `load` reaches the load generator
  expect((await staticReach("src/cli/load.ts")).has("autocannon")).toBe(true);
  for (const name of LOADED_LATER) expect(reach.get(name)?.join(" → "), name).toBeUndefined();
});
