import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { type KeysFile, keysFileSchema, MESSAGE_TIMING, RATE_LIMITS, singleKeyFile } from "../contract/index.js";
import { UsageError } from "../run/usage-error.js";
import { FAULTS, startReferenceServer } from "../target/embedded.js";
import { parseOrHelp } from "./config.js";
import { guardExit } from "./exit-guard.js";
import { readyLine } from "./ready-line.js";

const FAULT_NAMES = Object.keys(FAULTS).sort();

export const SERVE_USAGE = `usage: agent-harness serve [--port N] [--host H] [--keys FILE]
       [--window-seconds S] [--windows-on-whole-seconds] [--message-timeout-seconds S] [--clock-skew S]
       [--fault NAME]...
  --port N                     port to listen on (default 8080; 0 = any free port)
  --host H                     address to bind (default 127.0.0.1)
  --keys FILE                  JSON {"accounts": [...], "keys": [...]}; without it one
                               all-permission key is made and printed once
  --window-seconds S           rate-limit window W (default ${RATE_LIMITS.defaultWindowSeconds})
  --windows-on-whole-seconds   a rate window starts on the whole second its first request fell in
                               (default: at that request; PROFILE §7 leaves it to the service)
  --message-timeout-seconds S  Send Message time budget (default ${MESSAGE_TIMING.defaultBudgetSeconds})
  --clock-skew S               the server's clock S seconds ahead (negative: behind): every time it
                               shows moves (Date, X-RateLimit-Reset, createdAt), durations do not
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

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));
/** An fs or net failure in one word when it has a code (ENOENT, EADDRINUSE), else its message. */
const errnoOf = (err: unknown) =>
  err instanceof Error && "code" in err && typeof err.code === "string" ? err.code : messageOf(err);

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

/** Parse and validate `serve` arguments; a bad one is a UsageError with a readable message ("" for --help). */
export function parseServeArgs(argv: string[]) {
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
          "windows-on-whole-seconds": { type: "boolean" },
          "message-timeout-seconds": { type: "string" },
          "clock-skew": { type: "string" },
          fault: { type: "string", multiple: true },
          help: { type: "boolean" },
        },
      });
    } catch (err) {
      throw new UsageError(messageOf(err));
    }
  })();
  if (values.help) throw new UsageError("");
  const port = positive("port", values.port, 8080, { integer: true, allowZero: true });
  if (port > 65535) throw new UsageError(`--port must be at most 65535, got ${port}`);
  const faults = values.fault ?? [];
  for (const f of faults)
    if (!FAULTS[f]) throw new UsageError(`unknown --fault "${f}" (agent-harness serve --help lists the faults)`);
  return {
    port,
    host: values.host ?? "127.0.0.1",
    keys: values.keys ? readKeysFile(values.keys) : singleKeyFile(RATE_LIMITS.tiers.standard),
    generatedKey: !values.keys,
    windowSeconds: positive("window-seconds", values["window-seconds"], RATE_LIMITS.defaultWindowSeconds),
    windowStart: values["windows-on-whole-seconds"] ? ("whole-second" as const) : ("first-request" as const),
    messageTimeoutSeconds: positive(
      "message-timeout-seconds",
      values["message-timeout-seconds"],
      MESSAGE_TIMING.defaultBudgetSeconds,
    ),
    faults,
    clockSkewSeconds: clockSkew(values["clock-skew"]),
  };
}

/** `--clock-skew S`: any finite number of seconds, either sign. */
function clockSkew(raw: string | undefined): number {
  if (raw === undefined) return 0;
  const n = Number(raw);
  if (raw.trim() === "" || !Number.isFinite(n)) throw new UsageError(`--clock-skew must be a number of seconds, got "${raw}"`);
  return n;
}

/** A keys file (PROFILE §10), read and validated; `flag` names the option in what a user reads. */
export function readKeysFile(path: string, flag = "--keys"): KeysFile {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new UsageError(`cannot read ${flag} ${path}: ${errnoOf(err)}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${flag} ${path} is not valid JSON: ${jsonErrorAt(text, messageOf(err))}`);
  }
  const parsed = keysFileSchema.safeParse(json);
  if (!parsed.success)
    throw new UsageError(
      // one line, as every usage error: each issue at its path
      `${flag} ${path} is not a keys file: ${parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ")}`,
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

/**
 * `agent-harness serve`, and the container image's entry point (scripts/bundle-server.mjs bundles
 * this file): the reference server listens until SIGINT/SIGTERM. Returns the exit code.
 */
export async function serve(argv: string[], out = process.stdout): Promise<number> {
  const config = parseOrHelp(() => parseServeArgs(argv), SERVE_USAGE);
  if (!config) return 0;
  let server: Awaited<ReturnType<typeof startReferenceServer>>;
  try {
    server = await startReferenceServer(config);
  } catch (e) {
    throw new UsageError(`cannot listen on ${config.host}:${config.port}: ${messageOf(e)}`);
  }
  if (config.generatedKey) out.write(`api key: ${config.keys.keys[0]?.key} (shown once)\n`);
  if (config.faults.length) out.write(`injected faults: ${config.faults.join(", ")}\n`);
  if (config.clockSkewSeconds)
    out.write(`clock: ${config.clockSkewSeconds > 0 ? "+" : ""}${config.clockSkewSeconds} s from this machine's\n`);
  out.write(readyLine(server.baseUrl));
  await new Promise<void>((resolve) => {
    process.once("SIGINT", () => resolve());
    process.once("SIGTERM", () => resolve());
  });
  await server.close();
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  // the container's entry point: a crash of the server is exit 2 in one line too (src/cli/exit-guard.ts)
  const guard = guardExit();
  serve(process.argv.slice(2)).then(
    (code) => process.exit(guard.decide(code)),
    (err) => {
      // one line, not the whole usage (which lists every fault)
      process.stderr.write(`agent-harness serve: ${messageOf(err)}\n`);
      process.exit(guard.decide(2));
    },
  );
}
