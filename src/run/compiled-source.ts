import { existsSync } from "node:fs";
import { join, relative, sep } from "node:path";

/** The part of vite's plugin context this plugin uses. */
interface ResolveContext {
  resolve(source: string, importer?: string, options?: object): Promise<{ id: string } | null>;
}

/**
 * vite's resolver step that sends the suites' imports of the harness's TypeScript sources
 * (`sourceSrc/**\/*.ts`) to their compiled JavaScript twins in `compiledSrc`, where a twin
 * exists; the run's vitest configuration then leaves `compiledSrc` to node's own loader
 * (`nativeModules`). A checkout's CLI runs such a compiled copy (scripts/checkout-tree.mjs)
 * while its suites stay TypeScript: without this step vite would transform every module of
 * `src/` the suites reach, in the CLI's process, for the workers, and the workers would
 * evaluate them through vite's module runner. Measured on the embedded default run: its first
 * check starts 0.5–1.3 s sooner, on a warm cache and on a copy's first run alike (docs/figures.md).
 *
 * Its name carries the compiled tree's path, since vitest keys its module cache by the plugins'
 * names among other things: a suite transformed against one compiled tree (each edit of `src/`
 * makes another) is never reused against the next.
 */
export function compiledSource(sourceSrc: string, compiledSrc: string) {
  const under = `${posix(sourceSrc)}/`;
  return {
    name: `agent-harness:compiled-source:${compiledSrc}`,
    enforce: "pre" as const,
    async resolveId(this: ResolveContext, source: string, importer: string | undefined, options: object) {
      if (!importer) return null;
      const resolved = await this.resolve(source, importer, { ...options, skipSelf: true });
      const id = resolved && posix(resolved.id);
      if (!id?.startsWith(under) || !id.endsWith(".ts")) return null;
      const compiled = posix(join(compiledSrc, relative(sourceSrc, id))).replace(/\.ts$/, ".js");
      return existsSync(compiled) ? compiled : null;
    },
  };
}

/** vitest's `server.deps.external` entry that loads every module under `dir` with node's own loader. */
export const nativeModules = (dir: string): RegExp => new RegExp(`^${`${posix(dir)}/`.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`);

/** vite and vitest name modules by paths with forward slashes, Windows' included. */
const posix = (path: string) => path.split(sep).join("/");

/**
 * How a run's vitest loads the harness's own modules: `compiledSrc` is the `src/` beside the
 * running CLI's modules, `sourceSrc` the one beside the suites. Only a CLI that runs compiled
 * JavaScript (`compiled`) has a tree node's loader can take; one run through tsx (the checkout's
 * fallback when it cannot compile) has the TypeScript sources there, which a worker's node cannot
 * load (tsx's hooks are the CLI process's alone): vite transforms them, as for any suite.
 */
export function nativeSource(sourceSrc: string, compiledSrc: string, compiled: boolean) {
  if (!compiled) return { plugins: [], external: [] };
  return {
    plugins: sourceSrc === compiledSrc ? [] : [compiledSource(sourceSrc, compiledSrc)],
    external: [nativeModules(compiledSrc)],
  };
}
