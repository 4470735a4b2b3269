import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import type { FileNeeds } from "../plan/lanes.js";

/** The folders of the suites the CLI runs: each test file there declares what it needs. */
const SUITE_FOLDERS = ["suites/functional", "suites/property", "suites/load"];

/** A literal of a declaration (strings, booleans, arrays of them) as a value; anything else is a mistake of the file. */
function literal(node: ts.Expression, where: string): unknown {
  if (ts.isStringLiteral(node)) return node.text;
  if (node.kind === ts.SyntaxKind.TrueKeyword) return true;
  if (node.kind === ts.SyntaxKind.FalseKeyword) return false;
  if (ts.isArrayLiteralExpression(node)) return node.elements.map((e) => literal(e, where));
  if (ts.isObjectLiteralExpression(node))
    return Object.fromEntries(
      node.properties.map((p) => {
        if (!ts.isPropertyAssignment(p) || !ts.isIdentifier(p.name))
          throw new Error(`${where}: declareFile takes plain properties`);
        return [p.name.text, literal(p.initializer, where)];
      }),
    );
  throw new Error(`${where}: declareFile takes literals only (found ${ts.SyntaxKind[node.kind]})`);
}

/** The one top-level `declareFile({...})` of a suite file's source. */
export function declarationOf(source: string, where: string): FileNeeds {
  const file = ts.createSourceFile(where, source, ts.ScriptTarget.ES2022, false, ts.ScriptKind.TS);
  const calls = file.statements.flatMap((statement) => {
    if (!ts.isExpressionStatement(statement)) return [];
    const call = statement.expression;
    return ts.isCallExpression(call) && ts.isIdentifier(call.expression) && call.expression.text === "declareFile" ? [call] : [];
  });
  if (calls.length !== 1) throw new Error(`${where}: ${calls.length} top-level declareFile(…) calls, one expected`);
  const [argument] = calls[0]!.arguments;
  if (!argument) throw new Error(`${where}: declareFile(…) without its needs`);
  return literal(argument, where) as FileNeeds;
}

/** Every suite file's declaration, by its path under the root without the extension (`suites/functional/list.test`). */
export function readSuiteNeeds(root: string): Record<string, FileNeeds> {
  const needs: Record<string, FileNeeds> = {};
  for (const folder of SUITE_FOLDERS)
    for (const name of readdirSync(join(root, folder), { recursive: true }).map(String).sort())
      if (name.endsWith(".test.ts")) {
        const path = `${folder}/${name.replace(/\\/g, "/")}`;
        needs[path.replace(/\.ts$/, "")] = declarationOf(readFileSync(join(root, path), "utf8"), path);
      }
  return needs;
}
