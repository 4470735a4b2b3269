import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { Reporter, TestModule } from "vitest/node";

/** One vitest project's share of a run: its files' first start to last end, and their summed durations. */
export interface ProjectTime {
  project: string;
  files: number;
  /** from its first file being queued to its last file's end (projects of one groupOrder overlap; a globalSetup before them is not counted) */
  wallMs: number;
  /** the files' own durations added up: more than wallMs when files ran in parallel */
  filesMs: number;
}

const fileKey = (module: TestModule) => `${module.project.name}\u0000${module.moduleId}`;

/**
 * Where a test run's minutes go, per project: `.ci/run` prints the table this writes once npm test
 * is over, so a slower project shows in every CI log, not only in a profile someone thought to take.
 */
export class ProjectTimes implements Reporter {
  private readonly spans = new Map<string, { start: number; end: number; files: number; filesMs: number }>();
  /** by project and file: vitest may hand the end event another TestModule object than the queued one */
  private readonly started = new Map<string, number>();

  constructor(private readonly outputFile: string) {}

  onTestModuleQueued(module: TestModule): void {
    this.started.set(fileKey(module), Date.now());
  }

  onTestModuleEnd(module: TestModule): void {
    const end = Date.now();
    // never later than the file's own duration allows, whatever was heard of its queueing
    const start = Math.min(this.started.get(fileKey(module)) ?? end, end - module.diagnostic().duration);
    const name = module.project.name || "(root)";
    const span = this.spans.get(name) ?? { start, end, files: 0, filesMs: 0 };
    span.start = Math.min(span.start, start);
    span.end = Math.max(span.end, end);
    span.files += 1;
    span.filesMs += module.diagnostic().duration;
    this.spans.set(name, span);
  }

  onTestRunEnd(): void {
    const times: ProjectTime[] = [...this.spans]
      .sort((a, b) => a[1].start - b[1].start)
      .map(([project, s]) => ({ project, files: s.files, wallMs: s.end - s.start, filesMs: Math.round(s.filesMs) }));
    mkdirSync(dirname(this.outputFile), { recursive: true });
    writeFileSync(this.outputFile, `${JSON.stringify(times, null, 2)}\n`);
  }
}
