import { randomUUID } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { z } from "zod";

/**
 * How long each suite file took the last time this copy of the harness ran it, per kind of run
 * (target kind, window, selection): a run without account lanes starts its longest files first, so that its workers end
 * together instead of one long file starting last and ending alone (longest first: measured on
 * the embedded default run, 39–40 s → 35–37 s wall, docs/figures.md). Only the order changes:
 * what runs, and every verdict, are the same in any order.
 *
 * Used only where the order can change nothing but the time: a run of several workers, without
 * account lanes (their files keep a fixed order) and without --bail (where the order would decide
 * which checks run before the stop).
 *
 * A file not timed yet (the first run, a new file) starts before the timed ones, the larger first,
 * as vitest orders files it has no times for. (Ordering the first run by what the files declare
 * instead, the property files first and then those that wait out windows, was slower: 45 s
 * against 39–40 s, five workers busy computing cases at once on two cores.)
 */

const TimesFile = z.object({ runs: z.record(z.string(), z.record(z.string(), z.number().nonnegative())) });

export class FileTimes {
  private readonly measured = new Map<string, number>();

  private constructor(
    private readonly file: string,
    private readonly kind: string,
    private readonly all: Record<string, Record<string, number>>,
    private readonly shortMs: number,
  ) {}

  /**
   * The times kept in `dir` for runs of `kind` (the target's kind, its window, the checks selected:
   * each takes its own time); files shorter than `shortMs` start before the others (order()).
   */
  static open(dir: string, kind: string, shortMs = 0): FileTimes {
    const file = join(dir, "file-times.json");
    return new FileTimes(file, kind, readTimes(file), shortMs);
  }

  /** The last time of `file` (root-relative, without its extension) in a run of this kind, if any. */
  of(file: string): number | undefined {
    return this.all[this.kind]?.[file];
  }

  /** A file that ran to its end took `ms`. */
  record(file: string, ms: number): void {
    this.measured.set(file, Math.round(ms));
  }

  /**
   * Adds this run's times to what the file holds now (read again: runs that ended meanwhile keep
   * theirs), in one write renamed into place: a reader never sees half.
   */
  save(): void {
    if (!this.measured.size) return;
    const now = readTimes(this.file);
    const runs = { ...now, [this.kind]: { ...now[this.kind], ...Object.fromEntries(this.measured) } };
    // unique to this write: processes of several machines or containers may share the folder
    const partial = `${this.file}.${process.pid}.${randomUUID()}`;
    try {
      mkdirSync(dirname(this.file), { recursive: true });
      writeFileSync(partial, JSON.stringify({ runs }));
      renameSync(partial, this.file);
    } catch {
      // a folder it cannot write: the next run orders its files by their declarations
    }
  }

  /**
   * Compares two files for a run's start order, each as `[name, size]` (root-relative without
   * extension, bytes): the files not timed first, the larger first; then the short ones (under
   * `shortMs`), then the others, each longest first. Short files started last met the buckets the
   * long ones had emptied, and waited out their windows at the run's very end; started first
   * they meet full buckets (measured on the default run with short = W + 1 s, the longest a bucket
   * takes to refill: median 29.9 → 29.4 s over three runs each, docs/figures.md).
   */
  order(): (a: readonly [string, number], b: readonly [string, number]) => number {
    const short = (ms: number) => (ms < this.shortMs ? 1 : 0);
    return ([a, sizeA], [b, sizeB]) => {
      const ta = this.of(a);
      const tb = this.of(b);
      if (ta === undefined || tb === undefined) {
        if (ta !== tb) return ta === undefined ? -1 : 1;
        return sizeB - sizeA || a.localeCompare(b);
      }
      return short(tb) - short(ta) || tb - ta || a.localeCompare(b);
    };
  }
}

/** The times a file holds: none when it is missing, unreadable or half written. */
function readTimes(file: string): Record<string, Record<string, number>> {
  try {
    return TimesFile.parse(JSON.parse(readFileSync(file, "utf8"))).runs;
  } catch {
    return {};
  }
}
