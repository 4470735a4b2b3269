/**
 * Docs that run (STYLE §13): every shell command README.md and docs/*.md show is either run here
 * or, where it cannot run in a unit test, has each of its flags checked against the CLI's own
 * `--help`, so a renamed or removed option turns this red instead of leaving the docs to rot.
 *
 * A command is taken from a fenced `sh`/`bash` block (continuation lines joined, `# …` comments
 * dropped) or from an inline code span starting with `agent-harness`. A block whose first line is
 * `# needs: <what>` shows commands that need something this machine lacks (a deployment, a run's
 * report folder): they are never run, and a command with `--base-url` must be in such a block.
 * A block whose first line is `# runnable` shows agent-harness commands cheap enough to run here
 * end to end (a `--dry-run`, a `--help`): each is run and must exit 0.
 * The commands that could run here but take minutes are listed in LONG with where they do run.
 */
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, test } from "vitest";
import { untilReady } from "../cli/ready-line.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const BIN = join(ROOT, "bin/agent-harness.js");
const DOCS = [
  "README.md",
  ...readdirSync(join(ROOT, "docs"), { withFileTypes: true })
    .filter((f) => f.name.endsWith(".md"))
    .map((f) => `docs/${f.name}`),
];
const SCRATCH = mkdtempSync(join(tmpdir(), "agent-harness-docs-"));
afterAll(() => rmSync(SCRATCH, { recursive: true, force: true }));

interface DocCommand {
  /** file:line, for the failure message */
  where: string;
  text: string;
  /** the words after `agent-harness` or `npm`/`npx`, quotes removed */
  argv: string[];
  tool: "agent-harness" | "npm" | "other";
  /** what a `# needs:` block says the command needs */
  needs?: string;
  /** shown in a `# runnable` block: run here end to end, it must exit 0 */
  runnable?: true;
}

/** Shell words of one command: quotes removed, a `#` comment or a redirection and what follows cut. */
function words(line: string): string[] {
  const out: string[] = [];
  for (const m of line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)) {
    const word = m[1] ?? m[2] ?? m[3]!;
    if (m[3] !== undefined && (word.startsWith("#") || word === ">" || word === "|")) break;
    out.push(word);
  }
  return out;
}

function commandOf(text: string, where: string, needs?: string, runnable?: boolean): DocCommand {
  return { ...commandWords(text, where, needs), ...(runnable ? { runnable: true as const } : {}) };
}

function commandWords(text: string, where: string, needs?: string): DocCommand {
  const all = words(text);
  const start = all.findIndex((w) => w === "agent-harness" || w === "npm" || w === "npx");
  if (start < 0) return { where, text, argv: all, tool: "other", ...(needs ? { needs } : {}) };
  const harness = all.indexOf("agent-harness");
  if (harness >= 0) return { where, text, argv: all.slice(harness + 1), tool: "agent-harness", ...(needs ? { needs } : {}) };
  if (all[start] === "npm") return { where, text, argv: all.slice(start + 1), tool: "npm", ...(needs ? { needs } : {}) };
  return { where, text, argv: all.slice(start + 1), tool: "other", ...(needs ? { needs } : {}) };
}

function commandsIn(file: string): DocCommand[] {
  const text = readFileSync(join(ROOT, file), "utf8");
  const lineAt = (offset: number) => text.slice(0, offset).split("\n").length;
  const commands: DocCommand[] = [];
  for (const block of text.matchAll(/^```(?:sh|bash)\n([\s\S]*?)^```/gm)) {
    const body = block[1]!;
    const needs = /^# needs: (.+)$/m.exec(body.split("\n")[0] ?? "")?.[1];
    const runnable = body.split("\n")[0] === "# runnable";
    const first = lineAt(block.index!) + 1;
    let pending = "";
    body.split("\n").forEach((line, i) => {
      if (pending === "" && (line.trim() === "" || line.trim().startsWith("#"))) return;
      pending += `${line.replace(/\\$/, "")} `;
      if (line.endsWith("\\")) return;
      // `a && b` is two commands
      for (const part of pending.replace(/\s+#.*$/, "").split(/\s&&\s/))
        commands.push(commandOf(part.trim(), `${file}:${first + i}`, needs, runnable));
      pending = "";
    });
  }
  for (const span of text.matchAll(/`((?:npx )?agent-harness [^`]+)`/g))
    if (!text.slice(0, span.index).endsWith("``"))
      commands.push(commandOf(span[1]!, `${file}:${lineAt(span.index!)} (inline)`, "inline"));
  return commands;
}

const COMMANDS = DOCS.flatMap(commandsIn);
const harness = COMMANDS.filter((c) => c.tool === "agent-harness");

/** `node bin/agent-harness.js …`: exit code and output; never more than `timeoutMs`. */
function runHarness(argv: string[], options: { cwd?: string; timeoutMs?: number } = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
    execFile(
      process.execPath,
      [BIN, ...argv],
      {
        cwd: options.cwd ?? ROOT,
        env: { ...process.env, NO_COLOR: "1", AGENT_HARNESS_REPORT_DIR: join(SCRATCH, "reports") },
        timeout: options.timeoutMs ?? 150_000,
        maxBuffer: 16 * 1024 * 1024,
      },
      (err, stdout, stderr) => done({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr }),
    );
  });
}

/** The flags and subcommands each `--help` names, read once. */
const helpOf = new Map<string, Promise<string>>();
const help = (sub: string) => {
  if (!helpOf.has(sub))
    helpOf.set(
      sub,
      runHarness(sub === "" ? ["--help"] : [sub, "--help"]).then((r) => r.stdout + r.stderr),
    );
  return helpOf.get(sub)!;
};
/** The `--flags` among words, as a synopsis writes them too (`[--port N]`). */
const flagsIn = (argv: readonly string[]) =>
  argv.map((w) => w.replace(/^\[/, "").replace(/[=\]].*$/, "")).filter((w) => /^--[a-z]/.test(w));

/**
 * Commands that run on this machine but take minutes, or need Docker: the test only checks their
 * flags. Each says where it does run.
 */
const LONG: { match: (c: DocCommand) => boolean; why: string }[] = [
  {
    match: (c) => c.tool === "agent-harness" && c.argv[0] === "verify",
    why: "a verify run takes 10 s (smoke) to minutes: the meta suite runs `verify`, the functional, property and load projects its suites",
  },
  {
    match: (c) => c.tool === "agent-harness" && c.argv[0] === "load",
    why: "the scenarios take up to 2 min: the load project runs them",
  },
  { match: (c) => c.tool === "npm", why: "npm ci / npm test / npm run bench / npm run mutation take minutes to an hour" },
  { match: (c) => c.tool === "other" && c.argv[0] === "stryker", why: "a Stryker run takes an hour" },
];

/** The commands this test runs, each with what it must show. */
const isRun = (c: DocCommand) =>
  !c.needs &&
  c.tool === "agent-harness" &&
  (c.runnable || c.argv.includes("--help") || c.argv[0] === "openapi" || c.argv[0] === "serve");

describe("docs that run: README.md and docs/*.md", { timeout: 180_000 }, () => {
  test("the docs show commands, and every one is run, marked `# needs:`, or listed as long", () => {
    expect(harness.length).toBeGreaterThan(20);
    const unclassified = COMMANDS.filter((c) => !c.needs && !isRun(c) && !LONG.some((l) => l.match(c)));
    expect(unclassified.map((c) => `${c.where}: ${c.text}`)).toEqual([]);
    const notRunnable = COMMANDS.filter((c) => c.runnable && c.tool !== "agent-harness");
    expect(notRunnable.map((c) => `${c.where}: ${c.text} (a # runnable block holds agent-harness commands only)`)).toEqual([]);
    const remoteUnmarked = COMMANDS.filter((c) => !c.needs && c.argv.includes("--base-url"));
    expect(remoteUnmarked.map((c) => `${c.where}: ${c.text} (needs a deployment: mark its block "# needs: …")`)).toEqual([]);
  });

  // a few seconds each on an idle machine; minutes when two cores are shared by many runs
  test("the README links every page of docs/, and every page it links exists", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const linked = new Set([...readme.matchAll(/\]\((docs\/[^)#]+\.md)/g)].map((m) => m[1]!));
    expect([...linked].filter((page) => !DOCS.includes(page))).toEqual([]);
    expect(DOCS.filter((page) => page !== "README.md" && !linked.has(page))).toEqual([]);
  });

  test("every agent-harness subcommand and flag the docs use is in the CLI's --help", async () => {
    // each --help read once, all at the same time
    await Promise.all(["", ...new Set(harness.map((c) => c.argv[0]!))].map(help));
    const top = await help("");
    const missing: string[] = [];
    for (const c of harness) {
      const sub = c.argv[0]!;
      if (!new RegExp(`^  ${sub} `, "m").test(top)) {
        missing.push(`${c.where}: no command "${sub}"`);
        continue;
      }
      const text = await help(sub);
      for (const flag of flagsIn(c.argv))
        if (flag !== "--help" && !text.includes(`${flag} `)) missing.push(`${c.where}: ${sub} has no ${flag}`);
    }
    expect(missing).toEqual([]);
  });

  test("every npm script the docs run exists, with the flags its script reads", () => {
    const scripts = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;
    const missing: string[] = [];
    for (const c of COMMANDS.filter((c) => c.tool === "npm")) {
      const [verb, name, ...rest] = c.argv;
      // npm's own commands, not scripts of package.json
      if (verb === "ci" || verb === "pack" || verb === "install") continue;
      const script = verb === "run" ? name! : verb!;
      if (!(script in scripts)) missing.push(`${c.where}: no npm script "${script}"`);
      // npm run bench -- --flag: the flag is one the bench script parses
      const file = /tsx (scripts\/\S+\.ts)/.exec(scripts[script] ?? "")?.[1];
      for (const flag of flagsIn(rest))
        if (!file || !readFileSync(join(ROOT, file), "utf8").includes(`"${flag.slice(2)}"`))
          missing.push(`${c.where}: ${script} reads no ${flag}`);
    }
    expect(missing).toEqual([]);
  });

  test("docs/verify.md's option table and `verify --help` name the same flags with the same env vars", async () => {
    const table = [...readFileSync(join(ROOT, "docs/verify.md"), "utf8").matchAll(/^\| `(--[a-z-]+).*?\| `([A-Z_]+)`/gm)];
    const fromHelp = [...(await help("verify")).matchAll(/^ {2}(--[a-z-]+) .*\[\$([A-Z_]+)\]$/gm)];
    expect(
      new Set(table.map((m) => `${m[1]} ${m[2]}`)),
      "a flag of `verify --help` missing from docs/verify.md's table, or a row for a flag it lacks",
    ).toEqual(new Set(fromHelp.map((m) => `${m[1]} ${m[2]}`)));
  });
});

describe.concurrent("docs that run: the commands that run here", { timeout: 180_000 }, () => {
  const helps = harness.filter((c) => isRun(c) && c.argv.includes("--help"));
  test.for(helps.map((c) => [c.argv.join(" "), c] as const))("agent-harness %s", async ([, c]) => {
    const text = await help(c.argv[0] === "--help" ? "" : c.argv[0]!);
    expect(text).toMatch(/usage: agent-harness/);
  });

  // the others a `# runnable` block shows: a dry run starts the embedded reference and plans (about 10 s)
  test.for(
    harness
      .filter((c) => c.runnable && !c.argv.includes("--help") && c.argv[0] !== "openapi" && c.argv[0] !== "serve")
      .map((c) => [c.text, c] as const),
  )("%s exits 0 (# runnable)", async ([, c]) => {
    const run = await runHarness(c.argv, { cwd: SCRATCH, timeoutMs: 120_000 });
    expect(run.code, run.stdout + run.stderr).toBe(0);
  });

  test.for(harness.filter((c) => isRun(c) && c.argv[0] === "openapi").map((c) => [c.text, c] as const))("%s", async ([, c]) => {
    const run = await runHarness(c.argv, { cwd: SCRATCH });
    expect(run.code).toBe(0);
    expect((JSON.parse(run.stdout) as { openapi: string }).openapi).toBe("3.1.0");
  });

  test.for(
    harness.filter((c) => isRun(c) && c.argv[0] === "serve" && !c.argv.includes("--help")).map((c) => [c.text, c] as const),
  )("%s: ready line, /health and the API answer, stops on SIGTERM", async ([, c], { onTestFinished }) => {
    const dir = mkdtempSync(join(SCRATCH, "serve-"));
    // the keys file exactly as docs/reference-server.md shows it, with a real secret
    const keysFile = /^```json\n([\s\S]*?)^```/m.exec(readFileSync(join(ROOT, "docs/reference-server.md"), "utf8"))![1]!;
    const secret = `docs-${process.pid}-0123456789`;
    writeFileSync(join(dir, "keys.json"), keysFile.replace("<secret>", secret));
    // any free port: a fixed one may be taken by another run on this machine
    const argv = c.argv.map((w, i) => (c.argv[i - 1] === "--port" ? "0" : w));
    const child = spawn(process.execPath, [BIN, ...argv], { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
    // a failed or timed-out test leaves no server behind
    onTestFinished(() => {
      if (child.exitCode === null) child.kill("SIGKILL");
    });
    const { baseUrl, out } = await untilReady(child);
    const key = argv.includes("--keys") ? secret : /api key: (\S+)/.exec(out)?.[1];
    const health = await fetch(`${baseUrl.replace(/\/v1$/, "")}/health`);
    expect(health.status).toBe(200);
    await health.text();
    const agents = await fetch(`${baseUrl}/agents`, { headers: { authorization: `Bearer ${key}` } });
    expect(agents.status).toBe(200);
    await agents.text();
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });
});
