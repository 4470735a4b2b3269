import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative, sep } from "node:path";
import { z } from "zod";

/**
 * Which PROFILE sections and clauses each suite file's checks cite, as the last run that collected
 * the file saw them: a run with `--sections` imports only the files that have a check there.
 * Collecting a file imports it and what it imports, about a second of CPU for the eighteen
 * functional files that a one-section run otherwise collects only to run none of their checks
 * (docs/figures.md).
 *
 * A check's sections and clauses are its tags (suites/support/harness.ts `check`), which its code
 * and the tables it reads decide: the index is kept per version of them (a hash of every file
 * under src/, suites/ and fixtures/), so an edit anywhere starts a new one. A file the index does
 * not know is collected, and then known.
 */

const IndexFile = z.object({ files: z.record(z.string(), z.array(z.string())) });

export class SectionIndex {
  private readonly known: Map<string, Set<string>>;
  private readonly seen = new Map<string, Set<string>>();

  private constructor(
    private readonly root: string,
    private readonly file: string,
    known: Record<string, string[]>,
  ) {
    this.known = new Map(Object.entries(known).map(([f, words]) => [f, new Set(words)]));
  }

  /** The index of the code under `root`, kept in `dir` (read if there, empty if not or unreadable). */
  static open(root: string, dir: string): SectionIndex {
    const file = indexFile(root, dir);
    let known: Record<string, string[]> = {};
    try {
      known = IndexFile.parse(JSON.parse(readFileSync(file, "utf8"))).files;
    } catch {
      // none yet, or half written by a run that died: every file is collected
    }
    return new SectionIndex(root, file, known);
  }

  /**
   * Of `files` (root-relative, as vitest names them), those known to have no check citing any of
   * `selection` (sections and clause ids).
   */
  without(selection: readonly string[], files: readonly string[]): string[] {
    return files.filter((f) => {
      const words = this.known.get(f);
      return words !== undefined && !selection.some((s) => words.has(s));
    });
  }

  /** The tags of a collected file's checks (every check of the file, whatever this run selects). */
  record(file: string, tags: readonly string[]): void {
    this.seen.set(file, new Set(tags));
  }

  /**
   * Adds what this run collected (one write, renamed into place: a reader never sees half), unless
   * the code changed under the run (what it collected may then be of either version). The index
   * of any other version goes.
   */
  save(): void {
    if (!this.seen.size || indexFile(this.root, dirname(this.file)) !== this.file) return;
    const files: Record<string, string[]> = {};
    for (const [f, words] of [...this.known, ...this.seen]) files[f] = [...words].sort();
    const partial = `${this.file}.${process.pid}`;
    try {
      mkdirSync(join(this.file, ".."), { recursive: true });
      writeFileSync(partial, JSON.stringify({ files }));
      renameSync(partial, this.file);
      for (const other of readdirSync(dirname(this.file)))
        if (/^sections-[0-9a-f]+\.json$/.test(other) && other !== basename(this.file))
          rmSync(join(dirname(this.file), other), { force: true });
    } catch {
      // a folder it cannot write: the next run collects every file, as if there were no index
    }
  }
}

const indexFile = (root: string, dir: string) => join(dir, `sections-${codeVersion(root)}.json`);

/**
 * A hash of every file of the harness's code and tables (src/, suites/ and fixtures/ under `root`:
 * the boundary tables there give some checks their clauses): its version, for the index.
 */
export function codeVersion(root: string): string {
  const hash = createHash("sha256");
  for (const folder of ["src", "suites", "fixtures"]) {
    const base = join(root, folder);
    let entries: string[];
    try {
      entries = readdirSync(base, { recursive: true, encoding: "utf8" });
    } catch {
      continue;
    }
    for (const entry of entries.sort()) {
      let content: Buffer;
      try {
        content = readFileSync(join(base, entry));
      } catch {
        continue; // a folder
      }
      hash
        .update(relative(root, join(base, entry)).split(sep).join("/"))
        .update("\0")
        .update(content);
    }
  }
  return hash.digest("hex").slice(0, 16);
}
