import { relative, sep } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * vitest's own order (the last run's times where its cache has them, else the larger files first),
 * with a few files known to be long started first: on a fresh clone there is no cache, and a long
 * file that starts last (the typecheck is a small file) sets its project's time alone.
 */
export function startingFirst(files: readonly string[]) {
  return class StartingFirst extends BaseSequencer {
    override async sort(specs: TestSpecification[]): Promise<TestSpecification[]> {
      const sorted = await super.sort(specs);
      const rank = (spec: TestSpecification) => {
        const file = relative(spec.project.config.root, spec.moduleId).split(sep).join("/");
        const i = files.indexOf(file);
        return i < 0 ? files.length : i;
      };
      // a stable sort: the rest keep vitest's order
      return sorted
        .map((spec, i) => ({ spec, i }))
        .sort((a, b) => rank(a.spec) - rank(b.spec) || a.i - b.i)
        .map((x) => x.spec);
    }
  };
}
