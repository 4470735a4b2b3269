import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { type KeysFile, keysFileSchema, MESSAGE_TIMING, RATE_LIMITS, singleKeyFile } from "../contract/index.js";
import { buildServer } from "./app.js";
import { FAULT_NAMES, FAULTS } from "./faults/index.js";

export const SERVE_USAGE = `usage: agent-harness serve [--port N] [--host H] [--keys FILE]
       [--window-seconds S] [--message-timeout-seconds S] [--fault NAME]...
  --port N                     port to listen on (default 8080; 0 = any free port)
  --host H                     address to bind (default 127.0.0.1)
  --keys FILE                  JSON {"accounts": [...], "keys": [...]}; without it one
                               all-permission key is made and printed once
  --window-seconds S           rate-limit window W (default ${RATE_LIMITS.defaultWindowSeconds})
  --message-timeout-seconds S  Send Message time budget (default ${MESSAGE_TIMING.defaultBudgetSeconds})
  --fault NAME                 inject a defect (repeatable), one of:
${wrapNames(FAULT_NAMES, "                               ", 96)}`;

/** Names joined by ", " and wrapped into indented lines. */
function wrapNames(names: readonly string[], indent: string, width: number): string {
  const lines: string[] = [];
  let line = "";
  for (const name of names) {
    const next = line ? `${line}, ${name}` : name;
    if (indent.length + next.length > width && line) {
      lines.push(`${indent}${line},`);
      line = name;
    } else line = next;
  }
  if (line || !lines.length) lines.push(`${indent}${line || "(none)"}`);
  return lines.join("\n");
}

export class UsageError extends Error {}

/** An fs or net failure in one word when it has a code (ENOENT, EADDRINUSE), else its message. */
const errnoOf = (err: unknown) =>
  err instanceof Error ? ("code" in err && typeof err.code === "string" ? err.code : err.message) : String(err);

interface ServeConfig {
  port: number;
  host: string;
  keys: KeysFile;
  generatedKey: boolean;
  windowSeconds: number;
  messageTimeoutSeconds: number;
  faults: string[];
}

function positive(
  name: string,
  raw: string | undefined,
  fallback: number,
  opts: { integer?: boolean; allowZero?: boolean } = {},
) {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  const ok =
    raw.trim() !== "" && Number.isFinite(n) && (opts.allowZero ? n >= 0 : n > 0) && (!opts.integer || Number.isInteger(n));
  if (!ok)
    throw new UsageError(
      `--${name} must be a ${opts.integer ? "whole " : ""}number${opts.allowZero ? " ≥ 0" : " > 0"}, got "${raw}"`,
    );
  return n;
}

/** Parse and validate `serve` arguments; a bad one is a UsageError with a readable message. */
export function parseServeArgs(argv: string[]): ServeConfig {
  const { values } = (() => {
    try {
      return parseArgs({
        args: argv,
        strict: true,
        options: {
          port: { type: "string" },
          host: { type: "string" },
          keys: { type: "string" },
          "window-seconds": { type: "string" },
          "message-timeout-seconds": { type: "string" },
          fault: { type: "string", multiple: true },
          help: { type: "boolean" },
        },
      });
    } catch (err) {
      throw new UsageError(err instanceof Error ? err.message : String(err));
    }
  })();
  if (values.help) throw new UsageError("");
  const port = positive("port", values.port, 8080, { integer: true, allowZero: true });
  if (port > 65535) throw new UsageError(`--port must be at most 65535, got ${port}`);
  const faults = values.fault ?? [];
  for (const f of faults)
    if (!FAULTS[f]) throw new UsageError(`unknown --fault "${f}" (agent-harness serve --help lists the faults)`);
  const keysPath = values.keys;
  return {
    port,
    host: values.host ?? "127.0.0.1",
    keys: keysPath ? readKeysFile(keysPath) : singleKeyFile(RATE_LIMITS.tiers.standard),
    generatedKey: !keysPath,
    windowSeconds: positive("window-seconds", values["window-seconds"], RATE_LIMITS.defaultWindowSeconds),
    messageTimeoutSeconds: positive(
      "message-timeout-seconds",
      values["message-timeout-seconds"],
      MESSAGE_TIMING.defaultBudgetSeconds,
    ),
    faults,
  };
}

function readKeysFile(path: string): KeysFile {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new UsageError(`cannot read --keys ${path}: ${errnoOf(err)}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`--keys ${path} is not valid JSON: ${jsonErrorAt(text, (err as Error).message)}`);
  }
  const parsed = keysFileSchema.safeParse(json);
  if (!parsed.success)
    throw new UsageError(
      `--keys ${path} is not a keys file:\n${parsed.error.issues.map((i) => `  ${i.path.join(".") || "(root)"}: ${i.message}`).join("\n")}`,
    );
  return parsed.data;
}

/** `line 3, column 14: Unexpected token '}'` from JSON.parse's message and the text. */
export function jsonErrorAt(text: string, message: string): string {
  let position = text.length;
  const at = /position (\d+)/.exec(message);
  // Node 20 names no position for an unexpected token, only a snippet around it: find the snippet
  const near = /^Unexpected token '([\s\S])', (?:\.\.\.)?"([\s\S]*)"(?:\.\.\.)? is not valid JSON$/.exec(message);
  if (at) position = Number(at[1]);
  else if (near) {
    const [, token = "", snippet = ""] = near;
    const start = text.indexOf(snippet);
    if (start !== -1) position = start + snippet.indexOf(token);
  }
  const reason = message
    .replace(/ in JSON at position \d+.*$/s, "")
    .replace(/, (?:\.\.\.)?"[\s\S]*"(?:\.\.\.)? is not valid JSON$/, "")
    .replace(/\s*\(line \d+ column \d+\)$/, "");
  const before = text.slice(0, position).split("\n");
  return `line ${before.length}, column ${(before.at(-1)?.length ?? 0) + 1}: ${reason}`;
}

/** `agent-harness serve`: listen until SIGINT/SIGTERM. Returns the exit code. */
export async function runServer(argv: string[], out = process.stdout, err = process.stderr): Promise<number> {
  let config: ServeConfig;
  try {
    config = parseServeArgs(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    if (e.message === "") {
      out.write(`${SERVE_USAGE}\n`);
      return 0;
    }
    // one line, not the whole usage (which lists every fault)
    err.write(`agent-harness serve: ${e.message}\n`);
    return 2;
  }
  const { app } = buildServer(config);
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (e) {
    err.write(
      `agent-harness serve: cannot listen on ${config.host}:${config.port}: ${e instanceof Error ? e.message : String(e)}\n`,
    );
    return 2;
  }
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : config.port;
  const host = config.host.includes(":") ? `[${config.host}]` : config.host;
  if (config.generatedKey) out.write(`api key: ${config.keys.keys[0]?.key} (shown once)\n`);
  if (config.faults.length) out.write(`injected faults: ${config.faults.join(", ")}\n`);
  out.write(`listening on http://${host}:${port}/v1\n`);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  await app.close();
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runServer(process.argv.slice(2)).then((code) => process.exit(code));
}
