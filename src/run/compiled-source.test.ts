import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { compiledSource, nativeModules, nativeSource } from "./compiled-source.js";

const root = mkdtempSync(join(tmpdir(), "agent-harness-compiled source+(1)-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const sourceSrc = join(root, "src");
const compiledSrc = join(root, ".build", "cli", "0123abcd", "src");
for (const file of [join(sourceSrc, "load", "index.ts"), join(compiledSrc, "load", "index.js")]) {
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(file, "export {};\n");
}

/** vite's resolve as the plugin meets it: the specifier already resolved to `id` */
const resolvingTo = (id: string | null) => ({ resolve: async () => (id === null ? null : { id }) });
const plugin = compiledSource(sourceSrc, compiledSrc);
const resolve = (id: string | null) =>
  plugin.resolveId.call(resolvingTo(id), "../../src/load/index.js", join(root, "suites", "a.test.ts"), {});

describe("compiledSource", () => {
  test("a suite's import of a source module goes to its compiled twin", async () => {
    expect(await resolve(join(sourceSrc, "load", "index.ts"))).toBe(join(compiledSrc, "load", "index.js"));
  });
  test("a source module without a compiled twin stays with vite", async () => {
    expect(await resolve(join(sourceSrc, "load", "support.test-support.ts"))).toBeNull();
  });
  test("modules outside src/, JavaScript, entries and unresolved imports are left alone", async () => {
    expect(await resolve(join(root, "suites", "support", "harness.ts"))).toBeNull();
    expect(await resolve(join(`${sourceSrc}-other`, "load", "index.ts"))).toBeNull();
    expect(await resolve(join(sourceSrc, "load", "index.js"))).toBeNull();
    expect(await resolve(null)).toBeNull();
    const entry = resolvingTo(join(sourceSrc, "load", "index.ts"));
    expect(await plugin.resolveId.call(entry, join(sourceSrc, "load", "index.ts"), undefined, {})).toBeNull();
  });
  test("its name, part of vitest's module cache key, changes with the compiled tree", () => {
    expect(compiledSource(sourceSrc, join(root, ".build", "cli", "ffff0000", "src")).name).not.toBe(plugin.name);
  });
});

describe("nativeModules", () => {
  const native = nativeModules(compiledSrc);
  test("matches the modules under the folder, and no other, whatever characters its path holds", () => {
    expect(native.test(join(compiledSrc, "load", "index.js"))).toBe(true);
    expect(native.test(join(sourceSrc, "load", "index.ts"))).toBe(false);
    expect(native.test(`${compiledSrc}-other/index.js`)).toBe(false);
    expect(native.test(`/elsewhere${compiledSrc}/index.js`)).toBe(false);
  });
});

describe("nativeSource", () => {
  test("a CLI run through tsx leaves the TypeScript sources to vite: a worker's node cannot load them", () => {
    expect(nativeSource(sourceSrc, sourceSrc, false)).toEqual({ plugins: [], external: [] });
  });
  test("a checkout's compiled CLI sends the suites to its tree, and node loads the tree", () => {
    const { plugins, external } = nativeSource(sourceSrc, compiledSrc, true);
    expect(plugins.map((p) => p.name)).toEqual([compiledSource(sourceSrc, compiledSrc).name]);
    expect(external.map((e) => e.test(join(compiledSrc, "load", "index.js")))).toEqual([true]);
  });
  test("the package's compiled tree, its suites beside it, needs no redirect", () => {
    const { plugins, external } = nativeSource(compiledSrc, compiledSrc, true);
    expect(plugins).toEqual([]);
    expect(external.map((e) => e.test(join(compiledSrc, "load", "index.js")))).toEqual([true]);
  });
});
