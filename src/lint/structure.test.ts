/**
 * The shape of the tree, read with the TypeScript compiler's parser (no type checking, so it is
 * quick): no module reaches itself again through its imports — type-only imports and re-exports
 * included, since a circle of types is still two files that cannot be understood apart — and no
 * function of the harness outside its tests is longer than a reader holds in view.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, posix, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, test } from "vitest";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
/** The folders whose modules import one another. */
const FOLDERS = ["src", "suites", "scripts"];
/** The longest function body a file outside the tests may hold, in lines from its first to its last. */
const MAX_FUNCTION_LINES = 80;

const isTestCode = (path: string) => /\.test\.ts$|(^|\/)test-support[^/]*\.ts$/.test(path);

function sourceFiles(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { recursive: true })
    .map((name) => `${folder}/${String(name).replace(/\\/g, "/")}`)
    .filter((path) => path.endsWith(".ts") && !path.endsWith(".d.ts"))
    .sort();
}

const parse = (path: string, text = readFileSync(join(ROOT, path), "utf8")) =>
  ts.createSourceFile(path, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);

/** Every relative module a file names: `import`, `import type`, `export … from`, `import("…")` in a type or a call. */
function importsOf(file: ts.SourceFile): string[] {
  const specifiers: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    )
      specifiers.push(node.moduleSpecifier.text);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal))
      specifiers.push(node.argument.literal.text);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (argument && ts.isStringLiteral(argument)) specifiers.push(argument.text);
    }
    node.forEachChild(visit);
  };
  visit(file);
  return specifiers
    .filter((s) => s.startsWith("."))
    .map((s) => posix.join(posix.dirname(file.fileName), s).replace(/\.js$/, ".ts"));
}

/** The circles of a graph: its strongly connected components of more than one module, or one that imports itself (Tarjan). */
function circles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const connect = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    for (let w = stack.pop(); w !== undefined; w = w === v ? undefined : stack.pop()) {
      onStack.delete(w);
      component.push(w);
    }
    if (component.length > 1 || graph.get(v)?.includes(v)) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) connect(v);
  return found.sort((x, y) => (x[0] ?? "").localeCompare(y[0] ?? ""));
}

/** Each function of a file with a body longer than `max` lines, as `path:line name (N lines)`. */
function longFunctions(file: ts.SourceFile, max: number): string[] {
  const long: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const first = file.getLineAndCharacterOfPosition(node.getStart(file)).line;
      const lines = file.getLineAndCharacterOfPosition(node.end).line - first + 1;
      const name = "name" in node && node.name && ts.isIdentifier(node.name) ? node.name.text : "(anonymous)";
      if (lines > max) long.push(`${file.fileName}:${first + 1} ${name} (${lines} lines)`);
    }
    node.forEachChild(visit);
  };
  visit(file);
  return long;
}

const files = FOLDERS.flatMap(sourceFiles).map((path) => parse(path));

describe("the structure of the tree", () => {
  test("no import circle, type-level ones included", () => {
    const graph = new Map(files.map((file) => [file.fileName, importsOf(file)] as const));
    expect(circles(graph)).toEqual([]);
  });

  test(`no function in src outside the tests is over ${MAX_FUNCTION_LINES} lines`, () => {
    const long = files
      .filter((file) => file.fileName.startsWith("src/") && !isTestCode(file.fileName))
      .flatMap((file) => longFunctions(file, MAX_FUNCTION_LINES));
    expect(long).toEqual([]);
  });

  test("the readers see what they must: a type circle, a call circle, a self-import, a long arrow", () => {
    const a = parse("src/x/a.ts", `import type { B } from "./b.js";\nexport type A = B;`);
    const b = parse("src/x/b.ts", `export type B = import("./c.js").C;`);
    const c = parse("src/x/c.ts", `export { A as C } from "./a.js";\nconst d = () => import("../y/d.js");`);
    const d = parse("src/y/d.ts", `import "../y/d.js";`);
    const graph = new Map([a, b, c, d].map((file) => [file.fileName, importsOf(file)] as const));
    expect(graph.get("src/x/c.ts")).toEqual(["src/x/a.ts", "src/y/d.ts"]);
    expect(circles(graph)).toEqual([["src/x/a.ts", "src/x/b.ts", "src/x/c.ts"], ["src/y/d.ts"]]);
    expect(
      circles(
        new Map([
          ["p.ts", ["q.ts"]],
          ["q.ts", []],
        ]),
      ),
    ).toEqual([]);

    const body = Array.from({ length: 3 }, (_, i) => `  step(${i});`).join("\n");
    const arrow = parse("src/z.ts", `export const go = () => {\n${body}\n};\nfunction short() {}\n`);
    expect(longFunctions(arrow, 4)).toEqual(["src/z.ts:1 (anonymous) (5 lines)"]);
    expect(longFunctions(arrow, 5)).toEqual([]);
  });
});
