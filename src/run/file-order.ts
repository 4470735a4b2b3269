import { relative } from "node:path";
import type { TestSequencer, TestSpecification, Vitest } from "vitest/node";
import { laneFileOrder } from "../plan/lanes.js";

/** The order of a lane's files: vitest's sequencer interface. */
export class LaneOrder implements TestSequencer {
  shard(files: TestSpecification[]): TestSpecification[] {
    return files;
  }
  sort(files: TestSpecification[]): TestSpecification[] {
    return [...files].sort((a, b) => laneFileOrder(a.moduleId, b.moduleId));
  }
}

/**
 * The order of a run that stops at its first failure: the quickest files first, so a defect any
 * file shows is shown after the least time. A file vitest has no time for yet (its cache, kept
 * between runs, has none) goes first, the smaller first; then the others by their last run's time.
 */
export class QuickestFirst implements TestSequencer {
  constructor(private readonly ctx: Vitest) {}
  shard(files: TestSpecification[]): TestSpecification[] {
    return files;
  }
  sort(files: TestSpecification[]): TestSpecification[] {
    const cache = this.ctx.cache;
    const cost = (spec: TestSpecification): [number, number] => {
      const key = `${spec.project.name}:${relative(this.ctx.config.root, spec.moduleId)}`;
      const duration = cache.getFileTestResults(key)?.duration;
      return duration === undefined ? [0, cache.getFileStats(key)?.size ?? 0] : [1, duration];
    };
    return [...files].sort((a, b) => {
      const [x, y] = [cost(a), cost(b)];
      return x[0] - y[0] || x[1] - y[1];
    });
  }
}
