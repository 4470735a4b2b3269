import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
// @ts-expect-error: a plain JavaScript module of the checkout's scripts, without types
import { CompileError, compiledCheckout } from "../../scripts/checkout-tree.mjs";

const REPO_ROOT = resolve(fileURLToPath(new URL("../..", import.meta.url)));
const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A checkout of two modules, with the harness's node_modules (esbuild) beside them. */
function checkout(message: string): string {
  const root = mkdtempSync(join(tmpdir(), "agent-harness-checkout-"));
  made.push(root);
  symlinkSync(join(REPO_ROOT, "node_modules"), join(root, "node_modules"));
  mkdirSync(join(root, "src/cli"), { recursive: true });
  writeMessage(root, message);
  writeFileSync(join(root, "src/cli/main.ts"), 'export { message } from "./message.js";\n');
  writeFileSync(join(root, "src/cli/main.test.ts"), "this is no module the CLI loads;\n");
  // as the checkout's own: the compiled .js files are ES modules
  writeFileSync(join(root, "package.json"), '{ "type": "module" }\n');
  return root;
}
const writeMessage = (root: string, message: string) =>
  writeFileSync(join(root, "src/cli/message.ts"), `export const message: string = ${JSON.stringify(message)};\n`);

const load = async (root: string, tree: string): Promise<string> =>
  // a new URL per load: node caches modules by URL, and two trees of one version share theirs
  (await import(`${pathToFileURL(join(root, tree, "src/cli/main.js")).href}?t=${Math.random()}`)).message;

describe("the checkout's compiled CLI (scripts/checkout-tree.mjs)", () => {
  it("compiles src/ without its tests, reuses the tree while the sources stay, and never runs a stale one", async () => {
    const root = checkout("first");
    const tree: string = await compiledCheckout(root);
    expect(tree).toMatch(/^\.build\/cli\/[0-9a-f]{16}$/);
    expect(await load(root, tree)).toBe("first");
    expect(existsSync(join(root, tree, "src/cli/main.test.js"))).toBe(false);
    expect(existsSync(join(root, tree, "suites"))).toBe(false); // the CLI runs the checkout's TypeScript suites
    expect(await compiledCheckout(root)).toBe(tree);

    writeMessage(root, "edited");
    const next: string = await compiledCheckout(root);
    expect(next).not.toBe(tree);
    expect(await load(root, next)).toBe("edited");
    // the earlier tree stays for a run that started with it; only one unused for a day goes
    expect(existsSync(join(root, tree))).toBe(true);
    const dayAgo = new Date(Date.now() - 25 * 3600 * 1000);
    utimesSync(join(root, tree), dayAgo, dayAgo);
    await compiledCheckout(root);
    expect(readdirSync(join(root, ".build/cli"))).toEqual([next.split("/").pop()]);
  });

  it("stops at a source that does not compile, in one line naming the file and line", async () => {
    const root = checkout("fine");
    writeFileSync(join(root, "src/cli/message.ts"), "export const message = ;\n");
    const error = await compiledCheckout(root).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(CompileError);
    expect((error as Error).message).toMatch(/^src\/cli\/message\.ts:1:\d+: .+$/);
    // nothing half made is left to be run
    expect(readdirSync(join(root, ".build/cli"))).toEqual([]);
  });

  it("gives no tree when it cannot write one, so the CLI runs the sources through tsx", async () => {
    const root = checkout("nowhere to write");
    // .build/cli a file, not a folder: no tree can go there, whoever runs the test (root ignores modes)
    mkdirSync(join(root, ".build"));
    writeFileSync(join(root, ".build/cli"), "");
    expect(await compiledCheckout(root)).toBeUndefined();
  });
});
