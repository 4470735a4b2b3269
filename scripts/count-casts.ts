// Counts type assertions in src/ outside tests (STYLE §9: a cast is a place where the contract
// failed to say something): every AsExpression and
// angle-bracket TypeAssertion in the syntax tree, `as const` excluded. `as unknown as X`
// counts twice, as it is two assertions. A site without a `// cast: <reason>` comment on its
// line or the line above is marked. Run: npx tsx scripts/count-casts.ts
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";

const root = join(import.meta.dirname, "..");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    const isTest = entry.name.endsWith(".test.ts") || entry.name.startsWith("test-support");
    return entry.name.endsWith(".ts") && !isTest ? [path] : [];
  });
}

function isConstAssertion(type: ts.TypeNode): boolean {
  return ts.isTypeReferenceNode(type) && type.typeName.getText() === "const";
}

const found: string[] = [];
for (const file of sourceFiles(join(root, "src"))) {
  const text = readFileSync(file, "utf8");
  const lines = text.split("\n");
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const visit = (node: ts.Node): void => {
    if ((ts.isAsExpression(node) || ts.isTypeAssertionExpression(node)) && !isConstAssertion(node.type)) {
      const { line } = source.getLineAndCharacterOfPosition(node.type.getStart(source));
      const reasoned = [lines[line], lines[line - 1]].some((l) => l?.includes("// cast:"));
      found.push(
        `${relative(root, file)}:${line + 1}: as ${node.type.getText(source)}${reasoned ? "" : "  (no // cast: reason)"}`,
      );
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}
found.sort((a, b) => a.localeCompare(b, "en", { numeric: true }));
for (const line of found) console.log(line);
console.log(`total: ${found.length}`);
