/**
 * Docs that point somewhere real (STYLE §13): every relative link of README.md and docs/*.md
 * names a file of this checkout, and every `#anchor` names a heading of the page it points to,
 * spelled as GitHub spells heading anchors (github-slugger, the library GitHub's own renderer
 * follows, so the rules for case, punctuation and repeated headings are not copied here).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import GithubSlugger from "github-slugger";
import { describe, expect, test } from "vitest";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const PAGES = [
  "README.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
];

/** A page's text without its fenced blocks: a `](x)` or `# x` inside a code sample is not a link or a heading. */
const prose = (page: string) => readFileSync(join(ROOT, page), "utf8").replace(/^```[\s\S]*?^```/gm, "");

/** The anchors a page's headings get on GitHub. */
function anchorsOf(page: string): Set<string> {
  const slugger = new GithubSlugger();
  return new Set([...prose(page).matchAll(/^#{1,6} +(.+?) *#*$/gm)].map((m) => slugger.slug(m[1]!.replace(/`/g, ""))));
}

/** Every relative link of a page: where it points (from the root) and its anchor, with the line it is on. */
function linksOf(page: string): { where: string; target: string; anchor?: string }[] {
  const text = prose(page);
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .filter((m) => !/^[a-z]+:/i.test(m[1]!))
    .map((m) => {
      const [path = "", anchor] = m[1]!.split("#");
      const target = path === "" ? page : relative(ROOT, resolve(ROOT, dirname(page), path));
      const where = `${page}:${text.slice(0, m.index).split("\n").length}`;
      return { where, target, ...(anchor !== undefined ? { anchor } : {}) };
    });
}

describe("docs that point somewhere real: README.md and docs/*.md", () => {
  // a link out of the checkout (the published spec and PROFILE.md beside it, ../shared/spec) names a
  // file of the workplace, not of this checkout: a clean clone elsewhere does not have it
  const links = PAGES.flatMap(linksOf).filter((l) => !l.target.startsWith(".."));

  test("the pages link each other, and every relative link names a file of this checkout", () => {
    expect(links.length).toBeGreaterThan(10);
    expect(links.filter((l) => !existsSync(join(ROOT, l.target))).map((l) => `${l.where}: ${l.target}`)).toEqual([]);
  });

  test("every anchor names a heading of the page it points to", () => {
    const anchored = links.filter((l) => l.anchor !== undefined && l.target.endsWith(".md") && existsSync(join(ROOT, l.target)));
    expect(anchored.length).toBeGreaterThan(0);
    const broken = anchored.filter((l) => !anchorsOf(l.target).has(l.anchor!));
    expect(broken.map((l) => `${l.where}: ${l.target}#${l.anchor}`)).toEqual([]);
  });
});
