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
  return {
    name: `agent-harness:compiled-source:${compiledSrc}`,
    enforce: "pre" as const,
    async resolveId(this: ResolveContext, source: string, importer: string | undefined, options: object) {
      if (!importer) return null;
      const resolved = await this.resolve(source, importer, { ...options, skipSelf: true });
      if (!resolved?.id.startsWith(sourceSrc + sep) || !resolved.id.endsWith(".ts")) return null;
      const compiled = join(compiledSrc, relative(sourceSrc, resolved.id)).replace(/\.ts$/, ".js");
      return existsSync(compiled) ? compiled : null;
    },
  };
}

/** vitest's `server.deps.external` entry that loads every module under `dir` with node's own loader. */
export const nativeModules = (dir: string): RegExp => new RegExp(`^${(dir + sep).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`);
